import type { EntityManager } from '@mikro-orm/postgresql';
import { EMAIL_IDEMPOTENCY_DAYS } from '../../domain/email/limits.ts';

/** The marker `response` holds while a claim's delivery is not confirmed started (see markEmailKeyDispatchFailed). */
const DISPATCH_FAILED = 'dispatchFailed';

export interface EmailKeyClaim {
  readonly tenantId: number;
  readonly key: string;
  readonly requestHash: string;
  readonly deliveryId: string;
  readonly emailIds: readonly string[];
}

export interface StoredEmailKey {
  readonly requestHash: string;
  readonly deliveryId: string;
  readonly emailIds: readonly string[];
  /** The answer the first request got, once its delivery started; null until then. */
  readonly response: Record<string, unknown> | null;
  /** The first request stored its e-mails but could not confirm their delivery started: a repeat starts it. */
  readonly dispatchFailed: boolean;
  readonly ageMs: number;
}

/**
 * Claims the key for this request; false when a live claim exists. One statement decides between concurrent
 * requests (the primary key); a claim older than the key's lifetime is taken over in the same statement, so an
 * expired key behaves as a new one without a purge having run.
 */
export async function claimEmailKey(em: EntityManager, claim: EmailKeyClaim): Promise<boolean> {
  const rows = await em.execute<{ claimed: number }[]>(
    `insert into email_idempotency_keys (tenant_id, key, request_hash, delivery_id, email_ids, response, created_at)
     values (?, ?, ?, ?, ?::jsonb, null, now())
     on conflict (tenant_id, key) do update
       set request_hash = excluded.request_hash, delivery_id = excluded.delivery_id, email_ids = excluded.email_ids, response = null, created_at = now()
       where email_idempotency_keys.created_at < now() - make_interval(days => ?)
     returning 1 as claimed`,
    [claim.tenantId, claim.key, claim.requestHash, claim.deliveryId, JSON.stringify(claim.emailIds), EMAIL_IDEMPOTENCY_DAYS],
  );
  return rows.length === 1;
}

export async function findEmailKey(em: EntityManager, tenantId: number, key: string): Promise<StoredEmailKey | undefined> {
  const [row] = await em.execute<{ request_hash: string; delivery_id: string; email_ids: string[]; response: Record<string, unknown> | null; age_ms: string | number }[]>(
    `select request_hash, delivery_id, email_ids, response, extract(epoch from now() - created_at) * 1000 as age_ms
       from email_idempotency_keys where tenant_id = ? and key = ?`,
    [tenantId, key],
  );
  if (!row) return undefined;
  const dispatchFailed = row.response?.[DISPATCH_FAILED] === true;
  return { requestHash: row.request_hash, deliveryId: row.delivery_id, emailIds: row.email_ids, response: dispatchFailed ? null : row.response, dispatchFailed, ageMs: Number(row.age_ms) };
}

/**
 * Marks the claim's delivery as not confirmed started (the stored `response` holds only this marker until a repeat
 * starts it): a repeat of the key starts the delivery again at once instead of waiting for the claim to look abandoned.
 */
export async function markEmailKeyDispatchFailed(em: EntityManager, claim: { tenantId: number; key: string; deliveryId: string }): Promise<void> {
  await em.execute(`update email_idempotency_keys set response = jsonb_build_object('${DISPATCH_FAILED}', true) where tenant_id = ? and key = ? and delivery_id = ? and response is null`, [
    claim.tenantId,
    claim.key,
    claim.deliveryId,
  ]);
}

/** Keeps the answer for the key's repeats; only the claim of this delivery, and only once. */
export async function storeEmailKeyResponse(em: EntityManager, claim: { tenantId: number; key: string; deliveryId: string }, response: Record<string, unknown>): Promise<void> {
  await em.execute(`update email_idempotency_keys set response = ?::jsonb where tenant_id = ? and key = ? and delivery_id = ? and (response is null or response->>'${DISPATCH_FAILED}' = 'true')`, [
    JSON.stringify(response),
    claim.tenantId,
    claim.key,
    claim.deliveryId,
  ]);
}
