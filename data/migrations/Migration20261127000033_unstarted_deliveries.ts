import { Migration } from '@mikro-orm/migrations';

/**
 * The sweep for deliveries whose workflow never started reads the pending deliveries never attempted nor swept yet,
 * oldest first: a partial index holds just those (a few at any time), however many deliveries the table keeps.
 * `swept_at`: when the sweep started one, so a delivery whose workflow closed without attempting it is swept once,
 * never listed again ahead of newer ones.
 */
export class Migration20261127000033_unstarted_deliveries extends Migration {

  override name = 'Migration20261127000033_unstarted_deliveries';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" add column "swept_at" timestamptz null;`);
    // Deliveries of before the sweep had their fate then (their workflows long closed, perhaps past Temporal's
    // retention, where a start would no longer be refused): the sweep is for deliveries from now on.
    this.addSql(`update "webhook_deliveries" set "swept_at" = now() where state = 'pending' and attempt_count = 0;`);
    this.addSql(`create index "webhook_deliveries_unstarted_index" on "webhook_deliveries" ("created_at") where state = 'pending' and attempt_count = 0 and swept_at is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_unstarted_index";`);
    this.addSql(`alter table "webhook_deliveries" drop column if exists "swept_at";`);
  }

}
