import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Takes the tenant's card-key lock until the transaction ends, or answers false at once when another rotation of the
 * tenant holds it: one rotation of a tenant at a time, each deactivating the key the one before it made, and none
 * waiting (a waiter would hold a pooled connection for another's key generation). An advisory lock, not the tenant's
 * row: a row lock would hold up every payment of the tenant (the foreign-key checks of their inserts lock the tenant's
 * key columns for share).
 */
export async function tryLockTenantCardKeys(tx: EntityManager, tenantId: number): Promise<boolean> {
  const [row] = await tx.execute<{ locked: boolean }[]>(`select pg_try_advisory_xact_lock(hashtext('card-encryption-keys'), ?) as locked`, [tenantId]);
  return row?.locked === true;
}

/** Whole seconds until the tenant's newest key is `spacingSeconds` old, by the database's clock; 0 when it is, or has none. */
export async function secondsUntilCardKeyMayRotate(tx: EntityManager, tenantId: number, spacingSeconds: number): Promise<number> {
  const [row] = await tx.execute<{ wait: number | null }[]>(
    `select ceil(extract(epoch from max(created_at) + make_interval(secs => ?) - now()))::int as wait from card_encryption_keys where tenant_id = ?`,
    [spacingSeconds, tenantId],
  );
  return Math.max(0, row?.wait ?? 0);
}
