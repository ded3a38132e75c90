import { Migration } from '@mikro-orm/migrations';

/**
 * Why a payment failed without any attempt at a processor: the e-mail already subscribed to the plan, no merchant
 * account could take it, or none takes the card's network. `GET /payments/{id}` said "No merchant account could take
 * the payment" for all three, so a payment answered `AlreadySubscribed` read as a gateway without accounts. Orders
 * closed before keep none and read as before.
 */
export class Migration20261128000040_order_unprocessed_reason extends Migration {

  override name = 'Migration20261128000040_order_unprocessed_reason';

  override up(): void | Promise<void> {
    this.addSql(`alter table "orders" add column "unprocessed_reason" text null;`);
    this.addSql(`alter table "orders" add constraint "orders_unprocessed_reason_check" check ("unprocessed_reason" in ('already_subscribed', 'no_merchant_account', 'card_network_not_supported'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "orders" drop column "unprocessed_reason";`);
  }

}
