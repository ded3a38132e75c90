import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Holds the tenant's card-key lock until the transaction ends: rotations of one tenant run one after the other, so
 * each deactivates the key the one before it made. An advisory lock, not the tenant's row: a row lock would hold up
 * every payment of the tenant (the foreign-key checks of their inserts lock the tenant's key columns for share).
 */
export async function lockTenantCardKeys(tx: EntityManager, tenantId: number): Promise<void> {
  await tx.execute(`select pg_advisory_xact_lock(hashtext('card-encryption-keys'), ?)`, [tenantId]);
}
