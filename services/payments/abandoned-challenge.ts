import type { EntityManager } from '@mikro-orm/postgresql';
import { findClaimWaitingOnChallenge } from '../../data/queries/subscriptions.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';

/**
 * A checkout of a plan left at its 3-D Secure challenge (the cardholder closed the page, or chose another card) holds
 * the e-mail's subscription claim until the challenge expires, 15 minutes by default. A new submit of that e-mail to
 * the plan ends that challenge now, as its expiry would: voided, the order `expired`, the claim released. True when
 * the claim's payment settled, so the new submit is screened again; a completion already under way decides first
 * (the e-mail is then subscribed, or free again after a decline).
 */
export async function giveUpAbandonedChallenge(
  deps: { em: EntityManager; runner: Pick<PaymentRunner, 'supersedeChallenge'> },
  claim: { tenantId: number; productId: number; email: string },
): Promise<boolean> {
  const waiting = await findClaimWaitingOnChallenge(deps.em, claim);
  if (!waiting) return false;
  return (await deps.runner.supersedeChallenge({ tenantId: claim.tenantId, submitOrderId: waiting.submitOrderId })) !== 'not_waiting';
}
