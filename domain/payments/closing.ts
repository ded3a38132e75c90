import type { SubscriptionPlan } from '../catalog/product.ts';
import { statusById } from '../statuses/status-codes.ts';
import { StatusId } from '../statuses/status-ids.ts';
import { firstChargeWaitSeconds } from '../subscriptions/dunning.ts';
import { mayCascade } from './cascade-policy.ts';

/** An attempt's answer that can end a payment. */
export type FinalOutcome = { readonly kind: 'approved'; readonly statusId: number } | { readonly kind: 'declined'; readonly statusId: number };

/** What decides whether a payment goes on after an attempt. */
export interface PaymentTerms {
  readonly cascade: boolean;
  /** False: an approval is held for a capture or void, not settled. */
  readonly capture?: boolean;
}

/** How a payment closes: the order's final state and its plan's subscription, if it keeps one. */
export interface Closing {
  readonly state: 'approved' | 'declined';
  /** The last attempt's status. */
  readonly statusId: number;
  /**
   * Active when approved; in grace when a decline is salvaged (an insufficient-funds decline of a plan with grace
   * days). `firstChargeInSeconds`: when its billing charges first (`firstChargeWaitSeconds`).
   */
  readonly subscription?: SubscriptionPlan & { readonly state: 'active' | 'grace'; readonly firstChargeInSeconds: number };
  readonly salvage: boolean;
}

/** The last attempt's answer as a payment closes on it: anything but an approval or a decline closes as a timeout. */
export function finalOutcomeOf(outcome: { readonly kind: string; readonly statusId?: number }): FinalOutcome {
  if (outcome.kind === 'approved' || outcome.kind === 'declined') return { kind: outcome.kind, statusId: outcome.statusId! };
  return { kind: 'declined', statusId: StatusId.SYSTEM_TIMEOUT };
}

/** The closing of a payment whose last attempt was approved or declined. */
export function closingOf(outcome: FinalOutcome, plan: SubscriptionPlan | null): Closing {
  const approved = outcome.kind === 'approved';
  const salvage = !approved && plan !== null && plan.gracePeriodDays > 0 && statusById(outcome.statusId)?.group === 'insufficientFunds';
  return {
    state: approved ? 'approved' : 'declined',
    statusId: outcome.statusId,
    ...(plan && (approved || salvage)
      ? { subscription: { ...plan, state: approved ? ('active' as const) : ('grace' as const), firstChargeInSeconds: firstChargeWaitSeconds(plan, approved ? undefined : outcome.statusId) } }
      : {}),
    salvage,
  };
}

/**
 * Whether the first attempt's answer ends the payment: an approval to charge now, or a decline no cascade follows.
 * A challenge, a hold for capture, an unknown answer and a cascadable decline all go on.
 */
export function firstAnswerEndsPayment(
  terms: PaymentTerms,
  account: { allowRetriesFromOtherMids: boolean; allowInsufficientFundsRetries: boolean },
  outcome: { readonly kind: string; readonly statusId?: number },
): outcome is FinalOutcome {
  if (outcome.kind === 'approved') return terms.capture !== false;
  if (outcome.kind === 'declined') return !(terms.cascade && mayCascade(outcome.statusId!, account));
  return false;
}
