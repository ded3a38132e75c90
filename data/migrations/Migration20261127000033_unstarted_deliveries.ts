import { Migration } from '@mikro-orm/migrations';

/**
 * The sweep for deliveries whose workflow never started reads the pending deliveries never attempted, oldest first:
 * a partial index holds just those (a few at any time), however many deliveries the table keeps.
 */
export class Migration20261127000033_unstarted_deliveries extends Migration {

  override name = 'Migration20261127000033_unstarted_deliveries';

  override up(): void | Promise<void> {
    this.addSql(`create index "webhook_deliveries_unstarted_index" on "webhook_deliveries" ("created_at") where state = 'pending' and attempt_count = 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_unstarted_index";`);
  }

}
