import { Migration } from '@mikro-orm/migrations';

/**
 * Rules about money held by the database under concurrent submits (docs/invariants.md):
 * - `monthlyCap`: a MID's volume row carries the amounts reserved by attempts still in flight; a reservation is
 *   taken by one conditional update (`approved + reserved + amount <= cap`) and recorded on the order (whose
 *   attempts run one at a time), so releasing or converting it happens once however often an activity runs.
 * - one live subscription per tenant, product and e-mail: a partial unique index, claimed by a `pending`
 *   subscription when the order opens, before any processor call.
 * - one subscription per submit order: unique subscription order per parent, unique order per subscription.
 */
export class Migration20261122000006_money_under_concurrency extends Migration {

  override name = 'Migration20261122000006_money_under_concurrency';

  override up(): void | Promise<void> {
    this.addSql(`alter table "merchant_account_volumes" add column "reserved_amount" numeric(16,2) not null default 0;`);
    this.addSql(`alter table "orders" add column "cap_reservation_id" int null, add column "cap_reservation_month" date null;`);
    this.addSql(`alter table "orders" add constraint "orders_cap_reservation_id_foreign" foreign key ("cap_reservation_id") references "merchant_accounts" ("id") on delete set null;`);

    this.addSql(`alter table "subscriptions" drop constraint "subscriptions_state_check";`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_state_check" check ("state" in ('pending', 'active', 'grace', 'cancelled'));`);
    this.addSql(`create unique index "subscriptions_one_live_per_email" on "subscriptions" ("tenant_id", "product_id", lower("email")) where "state" in ('pending', 'active', 'grace');`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_order_id_unique" unique ("order_id");`);
    this.addSql(`create unique index "orders_one_subscription_order_per_submit" on "orders" ("parent_order_id") where "kind" = 'subscription';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "orders_one_subscription_order_per_submit";`);
    this.addSql(`alter table "subscriptions" drop constraint if exists "subscriptions_order_id_unique";`);
    this.addSql(`drop index if exists "subscriptions_one_live_per_email";`);
    this.addSql(`alter table "subscriptions" drop constraint "subscriptions_state_check";`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_state_check" check ("state" in ('active', 'grace', 'cancelled'));`);
    this.addSql(`alter table "orders" drop column "cap_reservation_id", drop column "cap_reservation_month";`);
    this.addSql(`alter table "merchant_account_volumes" drop column "reserved_amount";`);
  }

}
