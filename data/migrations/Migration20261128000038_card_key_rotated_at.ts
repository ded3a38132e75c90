import { Migration } from '@mikro-orm/migrations';

/**
 * When a tenant's card-encryption key was last rotated (claimed). A rotation generates an RSA key pair, a fraction of
 * a second of CPU; a rotation claims this column with one conditional update before it generates anything, so a
 * tenant rotates at most once a minute whatever arrives at once, and no database connection is held while a key is
 * generated.
 */
export class Migration20261128000038_card_key_rotated_at extends Migration {

  override name = 'Migration20261128000038_card_key_rotated_at';

  override up(): void | Promise<void> {
    this.addSql(`alter table "tenants" add column "card_key_rotated_at" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "tenants" drop column "card_key_rotated_at";`);
  }

}
