import { Migration } from '@mikro-orm/migrations';

/**
 * Customer leads (issue 9):
 * - `applications`: a tenant's storefronts. Every existing tenant gets a `default` one, which takes over its lead
 *   allowed origins and becomes the application of its products and of its lead key pair.
 * - `lead_key_sets`: one pair per application and environment instead of one per tenant. Existing pairs were
 *   generated as `pk_live_`/`sk_live_`, so they become the default application's live pair and keep working.
 * - `customer_leads`: one row per tenant and `session_id` (a constraint: parallel writes meet in `on conflict`),
 *   with an index for every filter of the lead query, each ending in the order it reads (`updated_at desc`).
 */
export class Migration20261122000010_customer_leads extends Migration {

  override name = 'Migration20261122000010_customer_leads';

  override up(): void | Promise<void> {
    this.addSql(`create table "applications" ("id" serial primary key, "tenant_id" int not null, "slug" varchar(64) not null, "name" varchar(200) not null, "lead_allowed_origins" text[] not null default '{}', "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "applications" add constraint "applications_tenant_id_slug_unique" unique ("tenant_id", "slug");`);
    this.addSql(`alter table "applications" add constraint "applications_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`create index "applications_lead_allowed_origins_index" on "applications" using gin ("lead_allowed_origins");`);
    this.addSql(`insert into "applications" ("tenant_id", "slug", "name", "lead_allowed_origins", "created_at", "updated_at") select "id", 'default', "name", "lead_allowed_origins", now(), now() from "tenants";`);
    this.addSql(`alter table "tenants" drop column "lead_allowed_origins";`);

    this.addSql(`alter table "products" add column "application_id" int null;`);
    this.addSql(`update "products" p set "application_id" = a."id" from "applications" a where a."tenant_id" = p."tenant_id" and a."slug" = 'default';`);
    this.addSql(`alter table "products" alter column "application_id" set not null;`);
    this.addSql(`alter table "products" add constraint "products_application_id_foreign" foreign key ("application_id") references "applications" ("id");`);

    this.addSql(`alter table "lead_key_sets" drop constraint "lead_key_sets_tenant_id_unique";`);
    this.addSql(`alter table "lead_key_sets" add column "application_id" int null, add column "environment" text null;`);
    this.addSql(`update "lead_key_sets" k set "application_id" = a."id", "environment" = 'live' from "applications" a where a."tenant_id" = k."tenant_id" and a."slug" = 'default';`);
    this.addSql(`alter table "lead_key_sets" alter column "application_id" set not null, alter column "environment" set not null;`);
    this.addSql(`alter table "lead_key_sets" add constraint "lead_key_sets_application_id_environment_unique" unique ("application_id", "environment");`);
    this.addSql(`alter table "lead_key_sets" add constraint "lead_key_sets_application_id_foreign" foreign key ("application_id") references "applications" ("id") on delete cascade;`);
    this.addSql(`alter table "lead_key_sets" add constraint "lead_key_sets_environment_check" check ("environment" in ('test', 'live'));`);

    this.addSql(`create table "customer_leads" ("id" uuid not null, "tenant_id" int not null, "application_id" int not null, "environment" text not null, "session_id" varchar(255) not null, "email" varchar(320) not null, "first_name" varchar(200) null, "last_name" varchar(200) null, "phone" varchar(50) null, "scans" jsonb not null default '[]', "pending_data" jsonb null, "tracking_fields" jsonb not null default '{}', "status" text not null default 'lead', "transaction_id" varchar(100) null, "order_id" int null, "amount" numeric(14,2) null, "currency" varchar(3) null, "subscription_id" int null, "paid_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "customer_leads" add constraint "customer_leads_tenant_id_session_id_unique" unique ("tenant_id", "session_id");`);
    this.addSql(`alter table "customer_leads" add constraint "customer_leads_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "customer_leads" add constraint "customer_leads_application_id_foreign" foreign key ("application_id") references "applications" ("id") on delete cascade;`);
    this.addSql(`alter table "customer_leads" add constraint "customer_leads_environment_check" check ("environment" in ('test', 'live'));`);
    this.addSql(`alter table "customer_leads" add constraint "customer_leads_status_check" check ("status" in ('lead', 'paid'));`);
    this.addSql(`create index "customer_leads_tenant_updated_index" on "customer_leads" ("tenant_id", "updated_at" desc, "id" desc);`);
    this.addSql(`create index "customer_leads_tenant_email_updated_index" on "customer_leads" ("tenant_id", "email", "updated_at" desc, "id" desc);`);
    this.addSql(`create index "customer_leads_tenant_status_updated_index" on "customer_leads" ("tenant_id", "status", "updated_at" desc, "id" desc);`);
    this.addSql(`create index "customer_leads_tenant_transaction_updated_index" on "customer_leads" ("tenant_id", "transaction_id", "updated_at" desc, "id" desc);`);
    this.addSql(`create index "customer_leads_tenant_subscription_updated_index" on "customer_leads" ("tenant_id", "subscription_id", "updated_at" desc, "id" desc);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "customer_leads" cascade;`);
    this.addSql(`alter table "tenants" add column "lead_allowed_origins" text[] not null default '{}';`);
    this.addSql(`update "tenants" t set "lead_allowed_origins" = a."lead_allowed_origins" from "applications" a where a."tenant_id" = t."id" and a."slug" = 'default';`);
    this.addSql(`delete from "lead_key_sets" k using "applications" a where a."id" = k."application_id" and (a."slug" <> 'default' or k."environment" <> 'live');`);
    this.addSql(`alter table "lead_key_sets" drop constraint "lead_key_sets_application_id_foreign", drop constraint "lead_key_sets_application_id_environment_unique", drop constraint "lead_key_sets_environment_check";`);
    this.addSql(`alter table "lead_key_sets" drop column "application_id", drop column "environment";`);
    this.addSql(`alter table "lead_key_sets" add constraint "lead_key_sets_tenant_id_unique" unique ("tenant_id");`);
    this.addSql(`alter table "products" drop constraint "products_application_id_foreign";`);
    this.addSql(`alter table "products" drop column "application_id";`);
    this.addSql(`drop table if exists "applications" cascade;`);
  }

}
