import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000001_initial extends Migration {

  override name = 'Migration20261122000001_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table "rate_limit_windows" ("subject" varchar(100) not null, "window_start" timestamptz not null, "request_count" int not null, primary key ("subject", "window_start"));`);

    this.addSql(`create table "status_codes" ("id" int not null, "status" varchar(200) not null, "successful" boolean not null, "is_gateway_level_status" boolean not null, "is_issuer_decline" boolean not null, "is_insufficient_funds" boolean not null, "is_invalid_card_details" boolean not null, "is_other" boolean not null, primary key ("id"));`);

    this.addSql(`create table "tenants" ("id" serial primary key, "slug" varchar(64) not null, "name" varchar(200) not null, "client_id" varchar(64) not null, "parent_company_name" varchar(200) null, "rate_limit_per_minute" int null, "email_tenant_key" uuid not null, "lead_allowed_origins" text[] not null default '{}', "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "tenants" add constraint "tenants_slug_unique" unique ("slug");`);
    this.addSql(`alter table "tenants" add constraint "tenants_client_id_unique" unique ("client_id");`);
    this.addSql(`alter table "tenants" add constraint "tenants_email_tenant_key_unique" unique ("email_tenant_key");`);

    this.addSql(`create table "sender_domains" ("id" serial primary key, "tenant_id" int not null, "domain" varchar(253) not null, "created_at" timestamptz not null);`);
    this.addSql(`alter table "sender_domains" add constraint "sender_domains_tenant_id_domain_unique" unique ("tenant_id", "domain");`);

    this.addSql(`create table "products" ("id" serial primary key, "tenant_id" int not null, "slug" varchar(64) not null, "name" varchar(200) not null, "price" numeric(14,2) not null, "currency" varchar(3) not null, "accepted_networks" text[] not null default '{NetworkA,NetworkB,NetworkC,NetworkD,NetworkE}', "subscription_plan" jsonb null, "card_submit_limit" int not null default 3, "card_submit_window_seconds" int not null default 600, "email_submit_limit" int not null default 5, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "products" add constraint "products_tenant_id_slug_unique" unique ("tenant_id", "slug");`);

    this.addSql(`create table "merchant_accounts" ("id" serial primary key, "tenant_id" int not null, "mid" varchar(64) not null, "title" varchar(200) not null, "agent" varchar(255) null, "acquiring_bank" varchar(255) null, "gateway" varchar(64) not null, "gateway_id" int null, "enabled_network_a" boolean not null default true, "enabled_network_b" boolean not null default true, "descriptor" varchar(255) null, "mcc" varchar(4) null, "acquirer_bin_network_a" varchar(11) null, "acquirer_bin_network_b" varchar(11) null, "psp" varchar(255) null, "max_price" numeric(14,2) null, "vertical_id" int null, "vertical" varchar(255) null, "monthly_cap" int null, "reserve_percentage" numeric(7,4) null, "discount_rate_percentage" numeric(7,4) null, "gateway_transaction_fee" numeric(14,2) null, "chargeback_fee" numeric(14,2) null, "routing_number" varchar(34) null, "account_number" varchar(34) null, "brand_id" int null, "brand" varchar(255) null, "mid_portal_url" varchar(2048) null, "allow_premium_program" boolean not null default false, "fully_live" boolean not null default false, "shorthand_suffix" varchar(32) null, "default_currency" varchar(3) not null default 'USD', "rdr_fee" numeric(14,2) null, "alert_fee" numeric(14,2) null, "cdrn_fee" numeric(14,2) null, "allow_retries_from_other_mids" boolean not null default false, "allow_insufficient_funds_retries" boolean not null default false, "cap_limited" timestamptz null, "force_allow_refunds" boolean not null default false, "dynamic_descriptor_enabled" boolean not null default false, "dynamic_descriptor_prefix" varchar(64) null, "dynamic_descriptor_prefix_network_b" varchar(64) null, "dynamic_descriptor_format" int null, "bank_auth_fee" numeric(14,2) null, "bank_decline_fee" numeric(14,2) null, "bank_avs_fee" numeric(14,2) null, "custom_fee" numeric(14,2) null, "custom_fee_approved_only" numeric(14,2) null, "notes" text null, "caid" varchar(64) null, "chargeback_mitigation_provider_id" int null, "chargeback_mitigation_provider" varchar(255) null, "chargeback_mitigation_notes" text null, "processor_portal_access_id" int null, "processor_portal_access" varchar(255) null, "merchant_defined_field1" varchar(255) null, "merchant_defined_field2" varchar(255) null, "merchant_defined_field3" varchar(255) null, "custom_field1" varchar(255) null, "custom_field2" varchar(255) null, "custom_field3" varchar(255) null, "mid_owner_id" int not null default 0, "requires_zip" boolean not null default false, "partner_store_id" varchar(255) null, "row_version" int not null default 1, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "merchant_accounts" add constraint "merchant_accounts_mid_unique" unique ("mid");`);

    this.addSql(`create table "merchant_account_currencies" ("id" serial primary key, "merchant_account_id" int not null, "currency" varchar(3) not null, "credentials_ciphertext" text not null);`);
    this.addSql(`alter table "merchant_account_currencies" add constraint "merchant_account_currencies_merchant_account_id_currency_unique" unique ("merchant_account_id", "currency");`);

    this.addSql(`create table "lead_key_sets" ("id" serial primary key, "tenant_id" int not null, "publishable_key_hash" varchar(64) not null, "secret_key_hash" varchar(64) not null, "created_at" timestamptz not null);`);
    this.addSql(`alter table "lead_key_sets" add constraint "lead_key_sets_tenant_id_unique" unique ("tenant_id");`);
    this.addSql(`alter table "lead_key_sets" add constraint "lead_key_sets_publishable_key_hash_unique" unique ("publishable_key_hash");`);
    this.addSql(`alter table "lead_key_sets" add constraint "lead_key_sets_secret_key_hash_unique" unique ("secret_key_hash");`);

    this.addSql(`create table "audit_entries" ("id" bigserial primary key, "tenant_id" int null, "actor" varchar(320) not null, "action" varchar(100) not null, "entity_type" varchar(100) not null, "entity_id" varchar(100) not null, "changes" jsonb null, "created_at" timestamptz not null);`);
    this.addSql(`create index "audit_entries_tenant_id_created_at_index" on "audit_entries" ("tenant_id", "created_at");`);

    this.addSql(`create table "api_keys" ("id" serial primary key, "tenant_id" int not null, "name" varchar(100) not null, "key_hash" varchar(64) not null, "display_prefix" varchar(16) not null, "created_at" timestamptz not null, "revoked_at" timestamptz null);`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_tenant_id_name_unique" unique ("tenant_id", "name");`);

    this.addSql(`create table "webhook_endpoints" ("id" uuid not null, "tenant_id" int not null, "slug" varchar(64) not null, "url" varchar(2048) not null, "event_types" text[] not null default '{}', "secret_ciphertext" text not null, "previous_secret_ciphertext" text null, "disabled_at" timestamptz null, "disabled_reason" varchar(500) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_tenant_id_slug_unique" unique ("tenant_id", "slug");`);

    this.addSql(`create table "webhook_deliveries" ("id" varchar(64) not null, "tenant_id" int not null, "endpoint_id" uuid not null, "event_type" varchar(100) not null, "body" text not null, "state" text not null default 'pending', "attempt_count" int not null default 0, "created_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_tenant_id_created_at_index" on "webhook_deliveries" ("tenant_id", "created_at");`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_created_at_index" on "webhook_deliveries" ("endpoint_id", "created_at");`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_state_check" check ("state" in ('pending', 'delivered', 'failed', 'endpoint_disabled'));`);

    this.addSql(`create table "webhook_attempts" ("id" serial primary key, "delivery_id" varchar(64) not null, "attempt_number" int not null, "attempted_at" timestamptz not null, "http_status" int null, "latency_ms" int not null, "error" varchar(1000) null, "response_snippet" varchar(1000) null);`);
    this.addSql(`alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_attempt_number_unique" unique ("delivery_id", "attempt_number");`);

    this.addSql(`alter table "sender_domains" add constraint "sender_domains_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "products" add constraint "products_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "merchant_accounts" add constraint "merchant_accounts_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "merchant_account_currencies" add constraint "merchant_account_currencies_merchant_account_id_foreign" foreign key ("merchant_account_id") references "merchant_accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "lead_key_sets" add constraint "lead_key_sets_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "audit_entries" add constraint "audit_entries_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete set null;`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`);

    this.addSql(`alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on delete cascade;`);
  }

}
