import { Migration } from '@mikro-orm/migrations';

/**
 * A subscription that ended (cancelled by the merchant, a hard decline, dunning given up) kept the card sealed for its
 * rebills for good, though nothing would be charged to it again. A cancel now drops it; this drops the cards of the
 * subscriptions that ended before. Nothing to restore on the way down: the cards are gone.
 */
export class Migration20261127000028_ended_subscriptions_keep_no_card extends Migration {

  override name = 'Migration20261127000028_ended_subscriptions_keep_no_card';

  override up(): void | Promise<void> {
    this.addSql(`update "subscriptions" set "sealed_card" = null where "state" = 'cancelled' and "sealed_card" is not null;`);
  }

  override down(): void | Promise<void> {}

}
