import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000004_merchant_volumes extends Migration {

  override name = 'Migration20261122000004_merchant_volumes';

  override up(): void | Promise<void> {
    this.addSql(`create table "merchant_account_volumes" ("merchant_account_id" int not null, "month" date not null, "approved_amount" numeric(16,2) not null, primary key ("merchant_account_id", "month"));`);

    this.addSql(`alter table "merchant_account_volumes" add constraint "merchant_account_volumes_merchant_account_id_foreign" foreign key ("merchant_account_id") references "merchant_accounts" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "merchant_account_volumes" cascade;`);
  }

}
