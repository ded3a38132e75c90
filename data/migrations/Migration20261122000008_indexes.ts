import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes the write path and the retention purge need (test/query-plans.test.ts shows each one used):
 * - `orders.parent_order_id`: a submit's subscription is found through its child order (`subscriptions.order_id` is
 *   unique since migration 000006, so its constraint's index serves the other half).
 * - `merchant_accounts.tenant_id`: MID selection starts from the tenant's accounts.
 * - `submit_attempts.created_at`, `idempotency_keys.created_at`, `webhook_deliveries.completed_at`: the retention
 *   purge finds expired rows by age instead of reading whole tables every hour.
 *
 * `if not exists`: on a large production table an operator can build these beforehand with
 * `create index concurrently` (which cannot run in the migrations' transaction) under the same names.
 */
export class Migration20261122000008_indexes extends Migration {

  override name = 'Migration20261122000008_indexes';

  override up(): void | Promise<void> {
    this.addSql(`create index if not exists "orders_parent_order_id_index" on "orders" ("parent_order_id");`);
    this.addSql(`create index if not exists "merchant_accounts_tenant_id_index" on "merchant_accounts" ("tenant_id");`);
    this.addSql(`create index if not exists "submit_attempts_created_at_index" on "submit_attempts" ("created_at");`);
    this.addSql(`create index if not exists "idempotency_keys_created_at_index" on "idempotency_keys" ("created_at");`);
    this.addSql(`create index if not exists "webhook_deliveries_completed_at_index" on "webhook_deliveries" ("completed_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "orders_parent_order_id_index";`);
    this.addSql(`drop index if exists "merchant_accounts_tenant_id_index";`);
    this.addSql(`drop index if exists "submit_attempts_created_at_index";`);
    this.addSql(`drop index if exists "idempotency_keys_created_at_index";`);
    this.addSql(`drop index if exists "webhook_deliveries_completed_at_index";`);
  }

}
