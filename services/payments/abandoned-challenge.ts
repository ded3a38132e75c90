import type { EntityManager } from '@mikro-orm/postgresql';
import { findClaimWaitingOnChallenge, holdsLiveSubscription } from '../../data/queries/subscriptions.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';
import type { PassedScreening, Screening } from './screening.ts';

/** The steps of the new submit's own screening that taking over a claim needs. */
export interface TakeOverSteps {
  /** The new submit screened as if the e-mail were free: blocklists and velocity, its slot claimed when it passes. */
  screenWithoutSubscription(): Promise<Screening>;
  /** Gives that slot back (the submit did not start after all). */
  releaseSlot(passed: PassedScreening): Promise<void>;
}

/**
 * A checkout of a plan left at its 3-D Secure challenge (the cardholder closed the page, or chose another card) holds
 * the e-mail's subscription claim until the challenge expires, 15 minutes by default. A new submit of that e-mail to
 * the plan ends that challenge now, as its expiry would (voided, the order `expired`, the claim released), but only a
 * submit that passes every other check: it is screened first without the subscription, its velocity slot claimed in
 * that one round trip, so a submit refused (over a velocity limit) leaves the waiting checkout alone. A completion
 * already under way decides first: the e-mail is then subscribed (the new submit is `AlreadySubscribed` and its slot
 * given back) or free again after a decline.
 *
 * Undefined when there is nothing to take over (the caller keeps `AlreadySubscribed`); else the new submit's screening.
 */
export async function takeOverAbandonedChallenge(
  deps: { em: EntityManager; runner: Pick<PaymentRunner, 'supersedeChallenge'> },
  claim: { tenantId: number; productId: number; email: string },
  steps: TakeOverSteps,
): Promise<Screening | undefined> {
  const waiting = await findClaimWaitingOnChallenge(deps.em, claim);
  if (!waiting) return undefined;
  const screened = await steps.screenWithoutSubscription();
  if (!screened.ok) return screened;
  try {
    await deps.runner.supersedeChallenge({ tenantId: claim.tenantId, submitOrderId: waiting.submitOrderId });
    if (!(await holdsLiveSubscription(deps.em, claim))) return screened;
  } catch (error) {
    await steps.releaseSlot(screened).catch(() => undefined);
    throw error;
  }
  // A completion decided first and subscribed the e-mail, or the challenge could not be ended (Temporal away).
  await steps.releaseSlot(screened).catch(() => undefined);
  return undefined;
}
