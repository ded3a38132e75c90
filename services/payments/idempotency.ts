import pWaitFor from 'p-wait-for';
import type { EntityManager } from '@mikro-orm/postgresql';
import { findIdempotencyKey, insertIdempotencyKey, storeIdempotentResult, takeOverAbandonedKey } from '../../data/queries/idempotency-keys.ts';
import { reserveOrderId } from '../../data/queries/orders.ts';
import { DomainError } from '../../domain/errors.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';
import { awaitsCardholder, type SubmitResult } from '../../domain/payments/submit-result.ts';

/** The request goes on with this submit order id, or is answered by its first request's result. */
export type IdempotencyClaim = { readonly id: number } | { readonly replay: SubmitResult };

const IN_FLIGHT_WAIT_MS = 5_000;
const IN_FLIGHT_POLL_MS = 50;
/**
 * A claim this old with no stored outcome, no workflow and no order belongs to a request that failed before
 * its payment started (e.g. Temporal unreachable); a retry takes it over with the same order id, so the
 * workflow id still deduplicates and the key never stays stuck.
 */
const ABANDONED_CLAIM_MS = 30_000;

/**
 * The first request with a key claims it with a fresh order id. A repeat with the same request hash gets
 * the first answer (a pre-processing outcome, or the payment's first result; it never charges twice); a
 * repeat while the first has not yet reached either is 409, as is the same key with another request.
 */
export async function claimIdempotencyKey(
  deps: { em: EntityManager; runner: Pick<PaymentRunner, 'resume'> },
  claim: { tenantId: number; key: string; requestHash: string },
): Promise<IdempotencyClaim> {
  const id = await reserveOrderId(deps.em);
  if (await insertIdempotencyKey(deps.em, { ...claim, submitOrderId: id })) return { id };

  // The first request may still be validating: wait for its outcome or its workflow, briefly.
  let lastError: unknown;
  return pWaitFor(
    async () => {
      const existing = await findIdempotencyKey(deps.em, claim.tenantId, claim.key);
      if (!existing || existing.requestHash !== claim.requestHash) throw new DomainError('conflict', 'Idempotency-Key was already used with a different request');
      lastError = undefined;
      // A first answer waiting on 3-D Secure is no longer the answer once the challenge ended: the payment tells its
      // final result (one Temporal no longer knows, or cannot be asked now, answers what was kept).
      if (existing.result && awaitsCardholder(existing.result)) {
        const latest = await Promise.race([deps.runner.resume(claim.tenantId, existing.submitOrderId).catch(() => undefined), delay(CHALLENGE_REFRESH_MS)]);
        return pWaitFor.resolveWith<IdempotencyClaim>({ replay: latest ?? existing.result });
      }
      if (existing.result) return pWaitFor.resolveWith<IdempotencyClaim>({ replay: existing.result });
      let replay: SubmitResult | undefined;
      try {
        replay = await deps.runner.resume(claim.tenantId, existing.submitOrderId);
        // The first request may have died before keeping its answer; keep it now, before Temporal forgets it.
        if (replay) await storeIdempotentResult(deps.em, claim.tenantId, claim.key, replay);
      } catch (error) {
        // The first request may be starting its workflow right now; such races settle within the wait.
        if (error instanceof DomainError) throw error;
        lastError = error;
      }
      if (replay) return pWaitFor.resolveWith<IdempotencyClaim>({ replay });
      const abandoned = !lastError && !existing.paymentStarted && existing.ageMs > ABANDONED_CLAIM_MS;
      // Retries racing for an abandoned claim: one takes it over, the others wait for its outcome like any repeat.
      if (abandoned && (await takeOverAbandonedKey(deps.em, { tenantId: claim.tenantId, key: claim.key, olderThanMs: ABANDONED_CLAIM_MS }))) {
        return pWaitFor.resolveWith<IdempotencyClaim>({ id: existing.submitOrderId });
      }
      return false;
    },
    {
      interval: IN_FLIGHT_POLL_MS,
      timeout: {
        milliseconds: IN_FLIGHT_WAIT_MS,
        fallback: () => {
          throw lastError ?? new DomainError('conflict', 'A request with this Idempotency-Key is still in progress');
        },
      },
    },
  );
}

/** Keeps the first answer a keyed request got, so that its repeats replay it. */
export async function rememberIdempotentResult(em: EntityManager, claim: { tenantId: number; key: string }, result: SubmitResult): Promise<void> {
  await storeIdempotentResult(em, claim.tenantId, claim.key, result);
}

/** How long a repeat waits for a challenged payment to say how it stands before replaying the kept answer (Temporal away). */
const CHALLENGE_REFRESH_MS = 2_000;
const delay = (ms: number) => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref());

