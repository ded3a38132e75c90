import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds whose workflow never started (the gateway stopped between reserving the refund and starting it) are
 * found by the unstarted-refunds sweep (`workflows/maintenance/unstarted-refunds.workflow.ts`): a partial index
 * holds just those rows, so the sweep reads a handful of entries however many refunds exist.
 */
export class Migration20261123000017_unstarted_refunds extends Migration {

  override name = 'Migration20261123000017_unstarted_refunds';

  override up(): void | Promise<void> {
    this.addSql(`create index if not exists "refunds_unstarted_index" on "refunds" ("created_at") where "state" = 'pending' and "submitted_at" is null and "review_required_at" is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "refunds_unstarted_index";`);
  }

}
