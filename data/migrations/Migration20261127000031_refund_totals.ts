import { Migration } from '@mikro-orm/migrations';

/**
 * What a refund's settlement left on the payment it refunds: the refunded total and whether anything is left to refund,
 * written in the statement that settles it. Its `transaction.completed` tells these, not the payment as it is when the
 * event is recorded (refunds settling close together all told the later total). Null for refunds settled before.
 */
export class Migration20261127000031_refund_totals extends Migration {

  override name = 'Migration20261127000031_refund_totals';

  override up(): void | Promise<void> {
    this.addSql(`alter table "refunds" add column "refunded_total_after" numeric(14,2) null, add column "refundable_after" boolean null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "refunds" drop column "refunded_total_after", drop column "refundable_after";`);
  }

}
