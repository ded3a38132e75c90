import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency-Keys of the actions on an existing resource (`POST /payments/{id}/capture|void`,
 * `POST /subscriptions/{id}/cancel|pause|resume`): a key names one action on one resource for its tenant, and keeps
 * that action's answer for its repeats. Purged after 7 days, as the payment keys.
 */
export class Migration20261127000032_action_idempotency_keys extends Migration {

  override name = 'Migration20261127000032_action_idempotency_keys';

  override up(): void | Promise<void> {
    this.addSql(`create table "action_idempotency_keys" (
      "tenant_id" int not null,
      "key" varchar(255) not null,
      "action" text not null,
      "target" text not null,
      "claim" uuid not null,
      "answer" jsonb null,
      "created_at" timestamptz not null default now(),
      primary key ("tenant_id", "key"));`);
    this.addSql(`create index "action_idempotency_keys_created_at_index" on "action_idempotency_keys" ("created_at");`);
    this.addSql(`alter table "action_idempotency_keys" add constraint "action_idempotency_keys_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "action_idempotency_keys";`);
  }

}
