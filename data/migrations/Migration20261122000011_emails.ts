import { Migration } from '@mikro-orm/migrations';

/**
 * Templated e-mail (issue 10):
 * - `emails`: one row per accepted e-mail, `queued` until the SMTP server took it (`sent`, with its message id) or
 *   refused it for good (`failed`, with the reason); read by tenant newest first, optionally by status or batch.
 * - `email_events`: each e-mail's history (queued, deferred by a temporary SMTP failure, sent, failed).
 * - `email_idempotency_keys`: one row per tenant and key (the primary key decides between concurrent repeats),
 *   the request's hash and the e-mails it queued; `response` is set once their delivery has started.
 */
export class Migration20261122000011_emails extends Migration {

  override name = 'Migration20261122000011_emails';

  override up(): void | Promise<void> {
    this.addSql(`create table "emails" ("id" uuid not null, "tenant_id" int not null, "batch_id" uuid null, "batch_index" int null, "from_address" varchar(320) not null, "to_addresses" jsonb not null, "cc_addresses" jsonb not null default '[]', "bcc_addresses" jsonb not null default '[]', "reply_to" varchar(320) null, "subject" varchar(998) not null, "template_type" text not null, "template_name" varchar(64) null, "template_content" text null, "data" jsonb not null default '{}', "status" text not null default 'queued', "attempt_count" int not null default 0, "smtp_message_id" varchar(998) null, "smtp_response" text null, "failure_reason" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "emails" add constraint "emails_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "emails" add constraint "emails_template_type_check" check ("template_type" in ('react', 'string'));`);
    this.addSql(`alter table "emails" add constraint "emails_status_check" check ("status" in ('queued', 'sent', 'failed'));`);
    this.addSql(`create index "emails_tenant_created_index" on "emails" ("tenant_id", "created_at" desc, "id" desc);`);
    this.addSql(`create index "emails_tenant_status_created_index" on "emails" ("tenant_id", "status", "created_at" desc, "id" desc);`);
    this.addSql(`create index "emails_batch_id_index" on "emails" ("batch_id");`);

    this.addSql(`create table "email_events" ("id" bigserial primary key, "email_id" uuid not null, "kind" text not null, "detail" text null, "occurred_at" timestamptz not null);`);
    this.addSql(`alter table "email_events" add constraint "email_events_email_id_foreign" foreign key ("email_id") references "emails" ("id") on delete cascade;`);
    this.addSql(`alter table "email_events" add constraint "email_events_kind_check" check ("kind" in ('queued', 'deferred', 'sent', 'failed'));`);
    this.addSql(`create index "email_events_email_id_id_index" on "email_events" ("email_id", "id");`);

    this.addSql(`create table "email_idempotency_keys" ("tenant_id" int not null, "key" varchar(300) not null, "request_hash" varchar(64) not null, "delivery_id" uuid not null, "email_ids" jsonb not null, "response" jsonb null, "created_at" timestamptz not null, primary key ("tenant_id", "key"));`);
    this.addSql(`alter table "email_idempotency_keys" add constraint "email_idempotency_keys_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`create index "email_idempotency_keys_created_at_index" on "email_idempotency_keys" ("created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "email_idempotency_keys" cascade;`);
    this.addSql(`drop table if exists "email_events" cascade;`);
    this.addSql(`drop table if exists "emails" cascade;`);
  }

}
