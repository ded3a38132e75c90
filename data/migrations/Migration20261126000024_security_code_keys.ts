import { Migration } from '@mikro-orm/migrations';

/**
 * Short-lived keys for card security codes. A payment's history keeps its sealed card for the namespace's retention;
 * its CVV is now sealed under one of these keys, which the retention pass deletes soon after, so no CVV outlives its
 * authorization in a form anyone can open (PCI DSS 3.3.1.2). Nothing to backfill: cards sealed before keep the CVV
 * inline in their envelope and open as before.
 */
export class Migration20261126000024_security_code_keys extends Migration {

  override name = 'Migration20261126000024_security_code_keys';

  override up(): void | Promise<void> {
    this.addSql(`create table "card_security_code_keys" ("id" varchar(40) not null, "wrapped_key" text not null, "sealing_until" timestamptz not null, "destroy_after" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "card_security_code_keys_destroy_after_index" on "card_security_code_keys" ("destroy_after");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "card_security_code_keys";`);
  }

}
