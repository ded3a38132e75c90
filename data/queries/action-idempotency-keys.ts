import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';

/** One action on one resource, as its Idempotency-Key names it. */
export interface ActionRequest {
  readonly tenantId: number;
  readonly key: string;
  /** `POST /subscriptions/{id}/pause` and the like: the route, which says the action. */
  readonly action: string;
  /** The resource acted on, as the caller named it. */
  readonly target: string;
}

export interface StoredAction {
  readonly action: string;
  readonly target: string;
  /** The first request's answer; null while it runs. */
  readonly answer: unknown;
}

/**
 * Claims the key for this request in one statement: a new key, or one the same request claimed and abandoned (no
 * answer after `abandonedAfterSeconds`: its process died mid-action) is taken over. Of requests racing with one key,
 * exactly one gets a claim; the others get undefined and find the key. The claim names the holder: storing the
 * answer and giving the key back take it, so a request whose key was taken over changes nothing of its successor's.
 */
export async function claimActionKey(em: EntityManager, request: ActionRequest, abandonedAfterSeconds: number): Promise<string | undefined> {
  const claim = randomUUID();
  const claimed = await em.execute<{ claim: string }[]>(
    `insert into action_idempotency_keys as k (tenant_id, key, action, target, claim) values (?, ?, ?, ?, ?)
     on conflict (tenant_id, key) do update set created_at = now(), claim = excluded.claim
       where k.answer is null and k.action = excluded.action and k.target = excluded.target
         and k.created_at < now() - make_interval(secs => ?)
     returning k.claim`,
    [request.tenantId, request.key, request.action, request.target, claim, abandonedAfterSeconds],
  );
  return claimed[0]?.claim === claim ? claim : undefined;
}

export async function findActionKey(em: EntityManager, tenantId: number, key: string): Promise<StoredAction | undefined> {
  const [row] = await em.execute<{ action: string; target: string; answer: unknown }[]>(
    `select action, target, answer from action_idempotency_keys where tenant_id = ? and key = ?`,
    [tenantId, key],
  );
  return row;
}

/** Keeps the first answer for the key's repeats, while this request still holds the key. */
export async function storeActionAnswer(em: EntityManager, request: ActionRequest, claim: string, answer: unknown): Promise<void> {
  await em.execute(`update action_idempotency_keys set answer = ? where tenant_id = ? and key = ? and claim = ? and answer is null`, [
    JSON.stringify(answer),
    request.tenantId,
    request.key,
    claim,
  ]);
}

/** Gives the key back after its action failed, while this request still holds it: a retry runs the action again. */
export async function releaseActionKey(em: EntityManager, request: ActionRequest, claim: string): Promise<void> {
  await em.execute(`delete from action_idempotency_keys where tenant_id = ? and key = ? and claim = ? and answer is null`, [request.tenantId, request.key, claim]);
}
