import { Migration } from '@mikro-orm/migrations';

/**
 * One active card-encryption key per tenant. Two rotations at once could each deactivate the keys they saw and then
 * insert their own, leaving several active (checkout pages handed different keys). Rotations now take the tenant's
 * card-key lock first (`lockTenantCardKeys`), and this index holds the rule. Keys already active beside a newer one
 * are deactivated first: the newest is the one `activeCardKey` handed out; the others still decrypt.
 */
export class Migration20261126000023_one_active_card_key extends Migration {

  override name = 'Migration20261126000023_one_active_card_key';

  override up(): void | Promise<void> {
    this.addSql(`update "card_encryption_keys" k set "active" = false
      where k."active" and exists (
        select 1 from "card_encryption_keys" newer
         where newer."tenant_id" = k."tenant_id" and newer."active" and (newer."created_at", newer."id") > (k."created_at", k."id"));`);
    this.addSql(`create unique index "card_encryption_keys_one_active_per_tenant" on "card_encryption_keys" ("tenant_id") where "active";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "card_encryption_keys_one_active_per_tenant";`);
  }

}
