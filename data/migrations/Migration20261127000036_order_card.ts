import { Migration } from '@mikro-orm/migrations';

/**
 * The card a payment was made with, as the generic API shows it (`brand`, the BIN shown, `last4`, expiry), kept on
 * its order from the moment it opens: a payment still `processing` (its processor's answer awaited or asked about)
 * or `failed` before any attempt (no merchant account could take it) showed `card: null`, though the caller sent
 * one. No card number, no security code: the same digits every attempt's transaction keeps. Orders opened before
 * keep none (their attempts still show theirs).
 */
export class Migration20261127000036_order_card extends Migration {

  override name = 'Migration20261127000036_order_card';

  override up(): void | Promise<void> {
    this.addSql(`alter table "orders" add column "card" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "orders" drop column "card";`);
  }

}
