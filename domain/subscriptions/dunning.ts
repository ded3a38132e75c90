import type { SubscriptionPlan } from '../catalog/product.ts';
import { statusById } from '../statuses/status-codes.ts';
import { StatusId } from '../statuses/status-ids.ts';

const DAY = 86_400;

/** Retry delays when a plan names none: insufficient funds are retried in days, other soft declines sooner. */
export const DEFAULT_DUNNING = { insufficientFundsRetrySeconds: [3 * DAY, 5 * DAY, 7 * DAY], otherRetrySeconds: [DAY, 3 * DAY] } as const;

/**
 * Issuer declines that may pass with time: a retry invited (3638 "Retry in a few days", 3629/4178/4246 call or refer to
 * the issuer, 4222/4245 resubmit, 2674, 3640), the issuer or the card network briefly away (4182, 4186, 4229, 4234), a
 * limit that resets (4194, 4195, 4228). Every other issuer decline (3635 "Stop all recurring payments", lost or stolen
 * cards, closed accounts, fraud) and every invalid-card decline is hard.
 */
const SOFT_ISSUER_DECLINES = new Set([3638, 3629, 4178, 4246, 4222, 4245, 2674, 3640, 4182, 4186, 4229, 4234, 4194, 4195, 4228]);

/**
 * Declines outside the issuer group that end a subscription all the same: the cardholder stopped this recurring
 * program (3636) or unsubscribed (1614), or the card, its BIN, country, e-mail or name is blocklisted. Charging
 * again would break the cardholder's instruction or the merchant's own rule.
 */
const STOPS_RECURRING = new Set([3636, 1614, 2884, 2887, 3808, 3814, 4115, 4116, 4119, 4168]);

/** The soft issuer declines before the ninth session's sets: subscription workflows recorded with them replay so. */
const SOFT_ISSUER_DECLINES_BEFORE = new Set([3638, 3629, 4178, 4222, 4245, 2674, 3640]);

export type DunningStep = { readonly kind: 'retry'; readonly afterSeconds: number } | { readonly kind: 'stop'; readonly reason: 'hard_decline' | 'retries_exhausted' };

/**
 * What follows a declined rebill: a hard decline stops at once; a soft one is retried on the plan's schedule for
 * its decline group (insufficient funds, or anything else), and the subscription ends when the schedule runs out.
 * `retriesSoFar` counts the retries of this period already made.
 */
export function nextDunningStep(statusId: number, retriesSoFar: number, plan: Pick<SubscriptionPlan, 'dunning'>, codes: 'current' | 'before' = 'current'): DunningStep {
  const group = statusById(statusId)?.group;
  const soft = codes === 'current' ? SOFT_ISSUER_DECLINES : SOFT_ISSUER_DECLINES_BEFORE;
  const stops = codes === 'current' && STOPS_RECURRING.has(statusId);
  const hard = stops || group === 'invalidCardDetails' || (group === 'issuerDecline' && !soft.has(statusId));
  if (hard) return { kind: 'stop', reason: 'hard_decline' };
  const schedule =
    group === 'insufficientFunds'
      ? (plan.dunning?.insufficientFundsRetrySeconds ?? DEFAULT_DUNNING.insufficientFundsRetrySeconds)
      : (plan.dunning?.otherRetrySeconds ?? DEFAULT_DUNNING.otherRetrySeconds);
  const delay = schedule[retriesSoFar];
  return delay === undefined ? { kind: 'stop', reason: 'retries_exhausted' } : { kind: 'retry', afterSeconds: delay };
}

/** The billing period and the trial in seconds: the plan's seconds when given, else its days. */
export function periodSeconds(plan: Pick<SubscriptionPlan, 'intervalDays' | 'intervalSeconds'>): number {
  return plan.intervalSeconds ?? plan.intervalDays * DAY;
}

export function trialSeconds(plan: Pick<SubscriptionPlan, 'trialDays' | 'trialSeconds'>): number {
  return plan.trialSeconds ?? plan.trialDays * DAY;
}

/**
 * Seconds from a checkout to its new subscription's first charge: the trial and one period when the checkout was
 * approved; when its decline was salvaged into grace, the first dunning retry of that charge (the grace period when
 * the schedule names none). The billing workflow waits this long and the subscription's `next_billing_at` says so.
 */
export function firstChargeWaitSeconds(plan: SubscriptionPlan, salvagedStatusId?: number): number {
  if (salvagedStatusId === undefined) return trialSeconds(plan) + periodSeconds(plan);
  const retry = nextDunningStep(salvagedStatusId, 0, plan);
  return retry.kind === 'retry' ? retry.afterSeconds : plan.gracePeriodDays * DAY;
}

/**
 * A rebill no processor was asked to charge, or whose charge failed on the gateway's side for good: no merchant
 * account had room for it (`None`), or a step of the payment failed (`Error` with status 0). Not the customer's decline.
 */
export function rebillNotProcessed(result: { readonly chargeSuccess: boolean; readonly statusId: number; readonly info: string }): boolean {
  return !result.chargeSuccess && result.statusId === 0 && (result.info === 'None' || result.info === 'Error');
}

/**
 * A rebill the processor never received: it answered no authorization, status inquiries found none, and the resends
 * met the same (the processor away or failing, HTTP 5xx): 4285 System Timeout, the gateway's status, never an
 * issuer's. Not the customer's decline either.
 */
export function rebillNeverReachedProcessor(result: { readonly chargeSuccess: boolean; readonly statusId: number }): boolean {
  return !result.chargeSuccess && result.statusId === StatusId.SYSTEM_TIMEOUT;
}

/** How long a period's rebill is retried while the gateway cannot process it, before it is dunned as a decline. */
export const NOT_PROCESSED_RETRY_LIMIT_SECONDS = 30 * DAY;

/** The wait before the `count`-th retry of a rebill the gateway could not process: the plan's "other" delays, repeating the last. */
export function notProcessedRetrySeconds(plan: Pick<SubscriptionPlan, 'dunning'>, count: number): number {
  const schedule = plan.dunning?.otherRetrySeconds ?? DEFAULT_DUNNING.otherRetrySeconds;
  return schedule[Math.min(count, schedule.length - 1)] ?? DAY;
}
