import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Holds the tenant's card-key lock until the transaction ends: a rotation's switch of the active key (deactivating the
 * one before, inserting its own) runs alone. An advisory lock, not the tenant's row: a row lock would hold up every
 * payment of the tenant (the foreign-key checks of their inserts lock the tenant's key columns for share).
 */
export async function lockTenantCardKeys(tx: EntityManager, tenantId: number): Promise<void> {
  await tx.execute(`select pg_advisory_xact_lock(hashtext('card-encryption-keys'), ?)`, [tenantId]);
}

/**
 * Claims the tenant's next card-key rotation in one conditional statement: granted when its last rotation is at least
 * `spacingSeconds` old by the database's clock (or it has none), which it records, so of rotations arriving at once
 * exactly one is granted (the others wait for its row, then find the new time). Refused, it says how many whole
 * seconds are left (1 to `spacingSeconds`), or that there is no such tenant (an operator's `tenantId`). `claimedAt` gives
 * the claim back with `releaseCardKeyRotation`.
 */
export async function claimCardKeyRotation(
  em: EntityManager,
  tenantId: number,
  spacingSeconds: number,
): Promise<{ granted: true; claimedAt: Date } | { granted: false; waitSeconds: number } | { granted: false; tenantMissing: true }> {
  const [claimed] = await em.execute<{ claimed_at: Date }[]>(
    // To the millisecond: the claim's time comes back as a Date, which `releaseCardKeyRotation` must match exactly.
    `update tenants set card_key_rotated_at = date_trunc('milliseconds', clock_timestamp())
      where id = ? and (card_key_rotated_at is null or card_key_rotated_at <= clock_timestamp() - make_interval(secs => ?))
      returning card_key_rotated_at as claimed_at`,
    [tenantId, spacingSeconds],
  );
  if (claimed) return { granted: true, claimedAt: new Date(claimed.claimed_at) };
  const [row] = await em.execute<{ wait: number | null }[]>(
    `select ceil(extract(epoch from card_key_rotated_at + make_interval(secs => ?) - clock_timestamp()))::int as wait from tenants where id = ?`,
    [spacingSeconds, tenantId],
  );
  if (!row) return { granted: false, tenantMissing: true };
  return { granted: false, waitSeconds: Math.min(spacingSeconds, Math.max(1, row.wait ?? 1)) };
}

/** Gives back a rotation's claim that did not issue a key, unless another rotation has claimed since. */
export async function releaseCardKeyRotation(em: EntityManager, tenantId: number, claimedAt: Date): Promise<void> {
  await em.execute(`update tenants set card_key_rotated_at = null where id = ? and card_key_rotated_at = ?`, [tenantId, claimedAt]);
}
