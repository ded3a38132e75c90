import { Migration } from '@mikro-orm/migrations';

/**
 * The gateway showed and stored the first 8 digits of every card number; for a number shorter than 16 digits that
 * with the last 4 leaves too few unknown (PCI DSS allows the first 6 there). NetworkC's numbers are all 15 digits, so
 * their stored BINs are cut to 6. A 13-digit NetworkA number cannot be told from a 16-digit one by what was stored.
 */
export class Migration20261126000020_shorter_bins_of_short_cards extends Migration {

  override name = 'Migration20261126000020_shorter_bins_of_short_cards';

  override up(): void | Promise<void> {
    this.addSql(`update "transactions" set "bin" = left("bin", 6) where "brand" = 'NetworkC' and length("bin") > 6;`);
  }

  override down(): void | Promise<void> {
    // The digits cut are gone; nothing to restore.
  }

}
