import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000005_card_encryption_keys extends Migration {

  override name = 'Migration20261122000005_card_encryption_keys';

  override up(): void | Promise<void> {
    this.addSql(`create table "card_encryption_keys" ("id" varchar(64) not null, "tenant_id" int not null, "public_jwk" jsonb not null, "private_key_ciphertext" text not null, "active" boolean not null default true, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "card_encryption_keys_tenant_id_active_index" on "card_encryption_keys" ("tenant_id", "active");`);

    this.addSql(`alter table "card_encryption_keys" add constraint "card_encryption_keys_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "card_encryption_keys" cascade;`);
  }

}
