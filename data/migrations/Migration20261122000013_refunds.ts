import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds (issue 12):
 * - `transactions.refunded_amount` / `refund_reserved_amount`: what has been refunded from an approved authorization
 *   and what refunds still in flight hold on it. A refund reserves its amount with one conditional update
 *   (`refunded + reserved + amount <= amount`), so concurrent refunds never total more than the captured amount;
 *   the check constraint backs the rule up should any other statement try.
 * - `refunds`: one row per refund request (`re_...`), pending until its workflow settles it exactly once; an
 *   optional idempotency key is unique per tenant.
 * - order states `authorized` (approved, waiting for capture: `capture: false` of `POST /payments`) and `voided`
 *   (an authorization released before capture, by `POST /payments/{id}/void` or by its durable expiry timer).
 * - recurring rebills: a subscription keeps its card sealed without the CVV (`sealed_card`), the period it has
 *   billed and when it was paused; `rebills` gives each charge of a period (and each dunning retry) one order,
 *   so a replayed rebill step finds the same order and the processor deduplicates its attempt.
 * - `GET /payments` reads a tenant's submit orders newest first (`orders_tenant_payments_index`) and finds an
 *   e-mail's through its customer (`orders_customer_id_index`).
 */
export class Migration20261122000013_refunds extends Migration {

  override name = 'Migration20261122000013_refunds';

  override up(): void | Promise<void> {
    this.addSql(`alter table "transactions" add column "refunded_amount" numeric(14,2) not null default 0, add column "refund_reserved_amount" numeric(14,2) not null default 0;`);
    this.addSql(`alter table "transactions" add constraint "transactions_refunds_within_amount" check ("refunded_amount" >= 0 and "refund_reserved_amount" >= 0 and "refunded_amount" + "refund_reserved_amount" <= "amount");`);

    this.addSql(`create table "refunds" ("id" varchar(40) not null, "tenant_id" int not null, "order_id" int not null, "original_transaction_id" uuid not null, "amount" numeric(14,2) not null, "currency" varchar(3) not null, "state" text not null default 'pending', "status_id" int null, "failure_message" varchar(255) null, "refund_transaction_id" uuid null, "reason" varchar(200) null, "idempotency_key" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "refunds" add constraint "refunds_tenant_id_idempotency_key_unique" unique ("tenant_id", "idempotency_key");`);
    this.addSql(`create index "refunds_order_id_index" on "refunds" ("order_id");`);
    this.addSql(`alter table "refunds" add constraint "refunds_tenant_id_foreign" foreign key ("tenant_id") references "tenants" ("id") on delete cascade;`);
    this.addSql(`alter table "refunds" add constraint "refunds_order_id_foreign" foreign key ("order_id") references "orders" ("id");`);
    this.addSql(`alter table "refunds" add constraint "refunds_original_transaction_id_foreign" foreign key ("original_transaction_id") references "transactions" ("id");`);
    this.addSql(`alter table "refunds" add constraint "refunds_refund_transaction_id_foreign" foreign key ("refund_transaction_id") references "transactions" ("id") on delete set null;`);
    this.addSql(`alter table "refunds" add constraint "refunds_state_check" check ("state" in ('pending', 'succeeded', 'failed'));`);
    this.addSql(`alter table "refunds" add constraint "refunds_amount_positive" check ("amount" > 0);`);

    this.addSql(`alter table "orders" drop constraint "orders_state_check";`);
    this.addSql(`alter table "orders" add constraint "orders_state_check" check ("state" in ('processing', 'pending_3ds', 'authorized', 'approved', 'declined', 'failed', 'expired', 'voided'));`);

    this.addSql(`alter table "subscriptions" add column "sealed_card" text null, add column "billed_periods" int not null default 0, add column "paused_at" timestamptz null, add column "cancelled_at" timestamptz null, add column "cancel_reason" varchar(100) null;`);
    this.addSql(`create table "rebills" ("subscription_id" int not null, "period" int not null, "attempt" int not null, "order_id" int not null, "state" text not null default 'processing', "status_id" int null, "created_at" timestamptz not null, primary key ("subscription_id", "period", "attempt"));`);
    this.addSql(`alter table "rebills" add constraint "rebills_order_id_unique" unique ("order_id");`);
    this.addSql(`alter table "rebills" add constraint "rebills_subscription_id_foreign" foreign key ("subscription_id") references "subscriptions" ("id") on delete cascade;`);
    this.addSql(`alter table "rebills" add constraint "rebills_state_check" check ("state" in ('processing', 'paid', 'declined'));`);

    this.addSql(`create index "orders_tenant_payments_index" on "orders" ("tenant_id", "id" desc) where "kind" = 'submit';`);
    this.addSql(`create index "orders_customer_id_index" on "orders" ("customer_id", "id" desc);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "orders_customer_id_index";`);
    this.addSql(`drop index if exists "orders_tenant_payments_index";`);
    this.addSql(`drop table if exists "rebills" cascade;`);
    this.addSql(`alter table "subscriptions" drop column "sealed_card", drop column "billed_periods", drop column "paused_at", drop column "cancelled_at", drop column "cancel_reason";`);
    this.addSql(`alter table "orders" drop constraint "orders_state_check";`);
    this.addSql(`alter table "orders" add constraint "orders_state_check" check ("state" in ('processing', 'pending_3ds', 'approved', 'declined', 'failed', 'expired'));`);
    this.addSql(`drop table if exists "refunds" cascade;`);
    this.addSql(`alter table "transactions" drop constraint "transactions_refunds_within_amount";`);
    this.addSql(`alter table "transactions" drop column "refunded_amount", drop column "refund_reserved_amount";`);
  }

}
