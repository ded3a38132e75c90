import { Migration } from '@mikro-orm/migrations';

/**
 * Why a subscription's billing is paused, when the gateway paused it: `charge_uncertain` (a failed rebill may have
 * charged the card; the merchant asks the processor about its order, then resumes or cancels). Null for a pause the
 * merchant asked for, and whenever billing is not paused.
 */
export class Migration20261127000030_pause_reason extends Migration {

  override name = 'Migration20261127000030_pause_reason';

  override up(): void | Promise<void> {
    this.addSql(`alter table "subscriptions" add column "pause_reason" varchar(40) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "subscriptions" drop column "pause_reason";`);
  }

}
