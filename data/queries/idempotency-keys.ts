import type { EntityManager } from '@mikro-orm/postgresql';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';

export interface IdempotencyKeyClaim {
  readonly tenantId: number;
  readonly key: string;
  /** SHA-256 hex of the request the key was first used with. */
  readonly requestHash: string;
  readonly submitOrderId: number;
}

export interface StoredIdempotencyKey {
  readonly requestHash: string;
  readonly submitOrderId: number;
  /** The answer given without a payment (a pre-processing outcome); null when a payment answers, or none yet. */
  readonly result: SubmitResult | null;
  /** How long ago the key was claimed, by the database's clock. */
  readonly ageMs: number;
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
  const [row] = await em.execute<{ request_hash: string; submit_order_id: number; result: SubmitResult | null; age_ms: number | string }[]>(
    `select request_hash, submit_order_id, result, extract(epoch from now() - created_at) * 1000 as age_ms
       from idempotency_keys where tenant_id = ? and key = ?`,
    [tenantId, key],
  );
  return row && { requestHash: row.request_hash, submitOrderId: row.submit_order_id, result: row.result, ageMs: Number(row.age_ms) };
}

/** Stores the answer a key's request got without a payment, for its repeats to replay. */
export async function storeIdempotentResult(em: EntityManager, tenantId: number, key: string, result: SubmitResult): Promise<void> {
  await em.execute(`update idempotency_keys set result = ? where tenant_id = ? and key = ?`, [JSON.stringify(result), tenantId, key]);
}
