import { Migration } from '@mikro-orm/migrations';

/**
 * A failed delivery may be sent again on request (`redeliverWebhook`): `redeliveries` counts those, names each
 * redelivery's workflow (`webhook/<id>/again-<n>`, the first id being taken for the namespace's retention) and lets
 * only one claim a failed delivery at a time (the claim is a conditional update of its row).
 */
export class Migration20261127000034_redeliveries extends Migration {

  override name = 'Migration20261127000034_redeliveries';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" add column "redeliveries" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop column if exists "redeliveries";`);
  }

}
