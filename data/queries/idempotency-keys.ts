import type { EntityManager } from '@mikro-orm/postgresql';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';

export interface IdempotencyKeyClaim {
  readonly tenantId: number;
  readonly key: string;
  /** Keyed digest (HMAC-SHA256 hex) of the request the key was first used with, card replaced by its fingerprint. */
  readonly requestHash: string;
  readonly submitOrderId: number;
}

export interface StoredIdempotencyKey {
  readonly requestHash: string;
  readonly submitOrderId: number;
  /** The first answer the request got (a pre-processing outcome or the payment's first result); null until then. */
  readonly result: SubmitResult | null;
  /** How long ago the key was claimed, by the database's clock. */
  readonly ageMs: number;
  /** Whether the key's payment opened its order: from then on a repeat may never start another payment. */
  readonly paymentStarted: boolean;
}

/** Claims the key for a request; false when the tenant already used it (the primary key decides, atomically). */
export async function insertIdempotencyKey(em: EntityManager, claim: IdempotencyKeyClaim): Promise<boolean> {
  const [claimed] = await em.execute<{ submit_order_id: number }[]>(
    `insert into idempotency_keys (tenant_id, key, request_hash, submit_order_id, created_at) values (?, ?, ?, ?, now())
     on conflict (tenant_id, key) do nothing returning submit_order_id`,
    [claim.tenantId, claim.key, claim.requestHash, claim.submitOrderId],
  );
  return claimed !== undefined;
}

export async function findIdempotencyKey(em: EntityManager, tenantId: number, key: string): Promise<StoredIdempotencyKey | undefined> {
  const [row] = await em.execute<{ request_hash: string; submit_order_id: number; result: SubmitResult | null; age_ms: number | string; payment_started: boolean }[]>(
    `select k.request_hash, k.submit_order_id, k.result, extract(epoch from now() - k.created_at) * 1000 as age_ms,
            exists (select 1 from orders o where o.id = k.submit_order_id) as payment_started
       from idempotency_keys k where k.tenant_id = ? and k.key = ?`,
    [tenantId, key],
  );
  return (
    row && { requestHash: row.request_hash, submitOrderId: row.submit_order_id, result: row.result, ageMs: Number(row.age_ms), paymentStarted: row.payment_started }
  );
}

/** Stores the first answer a key's request got, for its repeats to replay; a later answer never replaces it. */
export async function storeIdempotentResult(em: EntityManager, tenantId: number, key: string, result: SubmitResult): Promise<void> {
  await em.execute(`update idempotency_keys set result = ? where tenant_id = ? and key = ? and result is null`, [JSON.stringify(result), tenantId, key]);
}

/**
 * Takes over a claim its first request abandoned (older than `olderThanMs`, no answer kept, no order opened) for the
 * caller, in one conditional statement that also makes the claim young again: of retries racing for it exactly one
 * wins, and the others find it in progress. True when this caller took it.
 */
export async function takeOverAbandonedKey(em: EntityManager, claim: { tenantId: number; key: string; olderThanMs: number }): Promise<boolean> {
  const [taken] = await em.execute<{ submit_order_id: number }[]>(
    `update idempotency_keys k set created_at = now()
      where k.tenant_id = ? and k.key = ? and k.result is null and k.created_at < now() - make_interval(secs => ?)
        and not exists (select 1 from orders o where o.id = k.submit_order_id)
      returning k.submit_order_id`,
    [claim.tenantId, claim.key, claim.olderThanMs / 1000],
  );
  return taken !== undefined;
}
