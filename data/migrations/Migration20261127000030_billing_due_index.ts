import { Migration } from '@mikro-orm/migrations';

/**
 * Subscriptions whose billing is due and not paused, by due date: the stalled-billing sweep
 * (`workflows/maintenance/stalled-billing.workflow.ts`) reads the ones long overdue, which only a billing workflow
 * that stopped leaves so.
 */
export class Migration20261127000030_billing_due_index extends Migration {

  override name = 'Migration20261127000030_billing_due_index';

  override up(): void | Promise<void> {
    this.addSql(`create index "subscriptions_billing_due_index" on "subscriptions" ("next_billing_at") where "state" in ('active', 'grace') and "paused_at" is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "subscriptions_billing_due_index";`);
  }

}
