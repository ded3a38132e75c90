import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000003_payments extends Migration {

  override name = 'Migration20261122000003_payments';

  override up(): void | Promise<void> {
    this.addSql(`create table "submit_attempts" ("id" bigserial primary key, "tenant_id" int not null, "product_id" int not null, "card_fingerprint" varchar(64) not null, "email" varchar(320) not null, "created_at" timestamptz not null);`);
    this.addSql(`create index "submit_attempts_tenant_id_card_fingerprint_created_at_index" on "submit_attempts" ("tenant_id", "card_fingerprint", "created_at");`);
    this.addSql(`create index "submit_attempts_product_id_email_created_at_index" on "submit_attempts" ("product_id", "email", "created_at");`);

    this.addSql(`create table "idempotency_keys" ("tenant_id" int not null, "key" varchar(255) not null, "request_hash" varchar(64) not null, "submit_order_id" int not null, "result" jsonb null, "created_at" timestamptz not null, primary key ("tenant_id", "key"));`);

    this.addSql(`create table "customers" ("id" serial primary key, "tenant_id" int not null, "email" varchar(320) not null, "first_name" varchar(100) null, "last_name" varchar(100) null, "phone" varchar(40) null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "customers" add constraint "customers_tenant_id_email_unique" unique ("tenant_id", "email");`);

    this.addSql(`create table "campaigns" ("id" serial primary key, "tenant_id" int not null, "name" varchar(200) not null, "created_at" timestamptz not null);`);
    this.addSql(`alter table "campaigns" add constraint "campaigns_tenant_id_name_unique" unique ("tenant_id", "name");`);

    this.addSql(`create table "blocklist_entries" ("id" serial primary key, "tenant_id" int null, "kind" text not null, "value" varchar(320) not null, "created_at" timestamptz not null);`);
    this.addSql(`create index "blocklist_entries_kind_value_index" on "blocklist_entries" ("kind", "value");`);
    this.addSql(`alter table "blocklist_entries" add constraint "blocklist_entries_tenant_id_kind_value_unique" unique ("tenant_id", "kind", "value");`);

    this.addSql(`create table "affiliates" ("id" serial primary key, "tenant_id" int not null, "name" varchar(200) not null, "created_at" timestamptz not null);`);
    this.addSql(`alter table "affiliates" add constraint "affiliates_tenant_id_name_unique" unique ("tenant_id", "name");`);

    this.addSql(`create table "orders" ("id" serial primary key, "tenant_id" int not null, "product_id" int not null, "customer_id" int not null, "kind" text not null default 'submit', "parent_order_id" int null, "state" text not null default 'processing', "amount" numeric(14,2) not null, "currency" varchar(3) not null, "partner_session" varchar(50) null, "service_session" varchar(200) null, "workflow_id" varchar(200) null, "three_d_secure_id" varchar(64) null, "challenge_url" varchar(2048) null, "campaign_id" int null, "affiliate_id" int null, "sub_affiliate_primary" varchar(200) null, "sub_affiliate_secondary" varchar(200) null, "tracker_click_id" varchar(200) null, "props" jsonb null, "user_agent" varchar(1000) null, "ip" varchar(64) null, "billing_address" jsonb null, "shipping_address" jsonb null, "storefront" jsonb null, "phone" varchar(40) null, "mobile_wallet_a" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "orders" add constraint "orders_three_d_secure_id_unique" unique ("three_d_secure_id");`);
    this.addSql(`create index "orders_tenant_id_partner_session_index" on "orders" ("tenant_id", "partner_session");`);
    this.addSql(`create index "orders_tenant_id_created_at_index" on "orders" ("tenant_id", "created_at");`);

    this.addSql(`create table "subscriptions" ("id" serial primary key, "tenant_id" int not null, "product_id" int not null, "customer_id" int not null, "order_id" int not null, "email" varchar(320) not null, "state" text not null, "recurring_amount" numeric(14,2) not null, "next_billing_at" timestamptz not null, "grace_until" timestamptz null, "created_at" timestamptz not null);`);
    this.addSql(`create index "subscriptions_tenant_id_product_id_email_index" on "subscriptions" ("tenant_id", "product_id", "email");`);

    this.addSql(`create table "transactions" ("id" uuid not null, "tenant_id" int not null, "order_id" int not null, "product_id" int not null, "customer_id" int not null, "merchant_account_id" int null, "kind" text not null default 'authorization', "reference" varchar(100) not null, "attempt_number" int not null, "gateway" varchar(64) not null, "gateway_transaction_id" varchar(100) null, "status_id" int not null, "status" varchar(200) not null, "success" boolean not null, "amount" numeric(14,2) not null, "currency" varchar(3) not null, "mid" varchar(64) null, "descriptor" varchar(255) null, "auth_code" varchar(20) null, "email" varchar(320) not null, "first_name" varchar(100) null, "last_name" varchar(100) null, "bin" varchar(8) not null, "last4" varchar(4) not null, "brand" varchar(20) not null, "bin_country" varchar(2) null, "card_fingerprint" varchar(64) not null, "expiry_month" int not null, "expiry_year" int not null, "eci" varchar(2) null, "partner_session" varchar(50) null, "sandbox" boolean not null default false, "refunded" boolean not null default false, "refundable" boolean not null default false, "has_alert" boolean not null default false, "charged_back" boolean not null default false, "original_transaction_id" uuid null, "gateway_response" jsonb not null, "sent_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "transactions" add constraint "transactions_reference_unique" unique ("reference");`);
    this.addSql(`create index "transactions_tenant_id_sent_at_index" on "transactions" ("tenant_id", "sent_at");`);
    this.addSql(`create index "transactions_tenant_id_email_index" on "transactions" ("tenant_id", "email");`);
    this.addSql(`create index "transactions_tenant_id_bin_last4_index" on "transactions" ("tenant_id", "bin", "last4");`);
    this.addSql(`create index "transactions_tenant_id_gateway_transaction_id_index" on "transactions" ("tenant_id", "gateway_transaction_id");`);
    this.addSql(`create index "transactions_tenant_id_auth_code_index" on "transactions" ("tenant_id", "auth_code");`);
    this.addSql(`create index "transactions_merchant_account_id_sent_at_index" on "transactions" ("merchant_account_id", "sent_at");`);


    this.addSql(`alter table "submit_attempts" add constraint "submit_attempts_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "submit_attempts" add constraint "submit_attempts_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`);

    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "customers" add constraint "customers_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "campaigns" add constraint "campaigns_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "blocklist_entries" add constraint "blocklist_entries_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "blocklist_entries" add constraint "blocklist_entries_kind_check" check ("kind" in ('email', 'card', 'bin', 'bin_country'));`);

    this.addSql(`alter table "affiliates" add constraint "affiliates_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);

    this.addSql(`alter table "orders" add constraint "orders_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "orders" add constraint "orders_product_id_foreign" foreign key ("product_id") references "products" ("id");`);
    this.addSql(`alter table "orders" add constraint "orders_customer_id_foreign" foreign key ("customer_id") references "customers" ("id");`);
    this.addSql(`alter table "orders" add constraint "orders_parent_order_id_foreign" foreign key ("parent_order_id") references "orders" ("id") on delete set null;`);
    this.addSql(`alter table "orders" add constraint "orders_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on delete set null;`);
    this.addSql(`alter table "orders" add constraint "orders_affiliate_id_foreign" foreign key ("affiliate_id") references "affiliates" ("id") on delete set null;`);
    this.addSql(`alter table "orders" add constraint "orders_kind_check" check ("kind" in ('submit', 'subscription'));`);
    this.addSql(`alter table "orders" add constraint "orders_state_check" check ("state" in ('processing', 'pending_3ds', 'approved', 'declined', 'failed', 'expired'));`);

    this.addSql(`alter table "subscriptions" add constraint "subscriptions_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_product_id_foreign" foreign key ("product_id") references "products" ("id");`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id");`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_order_id_foreign" foreign key ("order_id") references "orders" ("id");`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_state_check" check ("state" in ('active', 'grace', 'cancelled'));`);

    this.addSql(`alter table "transactions" add constraint "transactions_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "transactions" add constraint "transactions_order_id_foreign" foreign key ("order_id") references "orders" ("id");`);
    this.addSql(`alter table "transactions" add constraint "transactions_product_id_foreign" foreign key ("product_id") references "products" ("id");`);
    this.addSql(`alter table "transactions" add constraint "transactions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id");`);
    this.addSql(`alter table "transactions" add constraint "transactions_merchant_account_id_foreign" foreign key ("merchant_account_id") references "merchant_accounts" ("id") on delete set null;`);
    this.addSql(`alter table "transactions" add constraint "transactions_original_transaction_id_foreign" foreign key ("original_transaction_id") references "transactions" ("id") on delete set null;`);
    this.addSql(`alter table "transactions" add constraint "transactions_kind_check" check ("kind" in ('authorization', 'void', 'refund'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "orders" drop constraint "orders_customer_id_foreign";`);
    this.addSql(`alter table "subscriptions" drop constraint "subscriptions_customer_id_foreign";`);
    this.addSql(`alter table "transactions" drop constraint "transactions_customer_id_foreign";`);
    this.addSql(`alter table "orders" drop constraint "orders_campaign_id_foreign";`);
    this.addSql(`alter table "orders" drop constraint "orders_affiliate_id_foreign";`);
    this.addSql(`alter table "orders" drop constraint "orders_parent_order_id_foreign";`);
    this.addSql(`alter table "subscriptions" drop constraint "subscriptions_order_id_foreign";`);
    this.addSql(`alter table "transactions" drop constraint "transactions_order_id_foreign";`);
    this.addSql(`alter table "transactions" drop constraint "transactions_original_transaction_id_foreign";`);

    this.addSql(`drop table if exists "submit_attempts" cascade;`);
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
    this.addSql(`drop table if exists "customers" cascade;`);
    this.addSql(`drop table if exists "campaigns" cascade;`);
    this.addSql(`drop table if exists "blocklist_entries" cascade;`);
    this.addSql(`drop table if exists "affiliates" cascade;`);
    this.addSql(`drop table if exists "orders" cascade;`);
    this.addSql(`drop table if exists "subscriptions" cascade;`);
    this.addSql(`drop table if exists "transactions" cascade;`);

    this.addSql(`CREATE INDEX status_codes_status_lower_index ON public.status_codes USING btree (lower((status)::text));`);
  }

}
