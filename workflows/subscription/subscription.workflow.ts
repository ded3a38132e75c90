import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PauseReason } from '../../domain/subscriptions/pause-reason.ts';
import type { Activities } from '../../activities/index.ts';
import type { SubscriptionPlan } from '../../domain/catalog/product.ts';
import type { PaymentSettings } from '../../domain/payments/payment-input.ts';
import type { PaymentEnd } from '../../domain/payments/submit-result.ts';
import { NOT_PROCESSED_RETRY_LIMIT_SECONDS, nextDunningStep, notProcessedRetrySeconds, periodSeconds, rebillNeverReachedProcessor, rebillNotProcessed, trialSeconds } from '../../domain/subscriptions/dunning.ts';
import {
  cancelSubscriptionSignal,
  billingActionUpdate,
  pauseSubscriptionSignal,
  resumeSubscriptionSignal,
  subscriptionProgressQuery,
  type BillingActionOutcome,
  type BillingStall,
} from '../contract/subscription-messages.ts';
import { OutcomeAttribute } from '../contract/search-attributes.ts';
import { workflowIds } from '../contract/workflow-ids.ts';
import { OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS, WORKER_LOSS_NOTICED_AFTER } from '../contract/call-timeouts.ts';
import { paymentWorkflow } from '../payment/payment.workflow.ts';
import { startWebhookDeliveries } from '../webhooks/start-deliveries.ts';
import type { SubscriptionEventType } from '../../domain/webhooks/events.ts';

/**
 * Database steps: short, idempotent, retried for minutes by Temporal; a step still failing then is tried again by
 * the workflow itself after a durable sleep (`persist`), for as long as it takes.
 */
const { prepareRebill, recordRebill, rebillMayHaveCharged, endSubscription, markSubscriptionPaused, recordSubscriptionEvent } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '30 seconds' },
});
/**
 * Asking the processor about an uncertain rebill: its calls are bounded by the processor timeout (they run at once), and
 * an answer it cannot get is a finding (`unknown`), not a failure; a failure is the database's, retried as a step.
 */
const { settleUncertainRebill } = proxyActivities<Activities>({
  startToCloseTimeout: OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS,
  heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '30 seconds' },
});

/**
 * Subscriptions started before this patch (they run for months) replay their failures as they happened: a step that
 * failed ended the workflow. From it on, a failed step is retried at workflow level and a webhook never ends billing.
 */
const STEPS_OUTLAST_FAILURES = 'subscription-steps-outlast-failures';
/**
 * Subscriptions started before this patch charged a period whose cancel or pause arrived while its rebill was being
 * prepared; they replay so. From it on, both are honoured after the step and before the charge.
 */
const SIGNALS_BEFORE_CHARGE = 'signals-before-charge';
/**
 * Subscriptions started before this patch dunned a rebill the gateway could not process like a decline (and ended
 * them when the schedule ran out); they replay so.
 */
const GATEWAY_FAILURES_ARE_NOT_DECLINES = 'gateway-failures-are-not-declines';
/**
 * Subscriptions waiting since before this patch wait in one run however many pauses, resumes and cancels arrive; they
 * replay so. From it on, a wait whose history grew long continues as new with what is left of it.
 */
const WAITS_ROLL_OVER = 'subscription-waits-roll-over';
/**
 * Runs before this patch counted the next wait from their successor's start, so every step recorded after a charge
 * (a stall included) moved that charge, and every later one, past the date shown. From it on, the next run falls due
 * at the date recorded and told (`nextBillingAt`, `retryAt`).
 */
const BILLING_DATES_AS_RECORDED = 'billing-dates-as-recorded';
/**
 * Runs before this patch charged a period again under a new order when its rebill's payment failed though the card
 * may have been charged (an answer lost for good, an approval not voided); they replay so. From it on, billing pauses
 * there for the merchant.
 */
const UNCERTAIN_CHARGES_PAUSE = 'uncertain-rebill-charges-pause';
/**
 * Runs before this patch learnt of an uncertain charge from the order's records only; from it on, also from the payment
 * itself, which knows of one the database never recorded (an answer lost while the database was away).
 */
const PAYMENTS_TELL_UNCERTAIN_CHARGES = 'payments-tell-uncertain-charges';
/**
 * Runs before this patch failed, their billing lost, when their rebill's payment ended without a result (an operator
 * terminated it); they replay so. From it on, billing pauses there for the merchant, the charge uncertain.
 */
const UNFINISHED_REBILLS_PAUSE = 'unfinished-rebill-payments-pause';
/**
 * Runs before this patch dunned a rebill the processor never received (4285, the processor away) as the customer's
 * decline, cancelling the subscription when the schedule ran out; they replay so. From it on, such a rebill is tried
 * again as one the gateway could not process.
 */
const PROCESSOR_OUTAGES_ARE_NOT_DECLINES = 'processor-outages-are-not-declines';
/** Runs before this patch started rebills whose transaction event named no subscription (0); they replay so. */
const REBILLS_NAME_THEIR_SUBSCRIPTION = 'rebills-name-their-subscription';
/**
 * Runs before this patch charged the period under a new order when the merchant resumed billing paused for an
 * uncertain charge; they replay so. From it on, the processor is asked about the uncertain try first: an approval it
 * confirms pays the period, a confirmed absence charges it anew, no answer pauses again.
 */
const ASK_BEFORE_CHARGING_AGAIN = 'ask-about-uncertain-charge-before-charging-again';
/** Runs before this patch dunned by the earlier code sets (`nextDunningStep(…, 'before')`); they replay so. */
const DUNNING_CODES = 'dunning-codes-stops-and-outages';
/**
 * Runs before this patch left a resume that reached a run started paused (its pause told by the run before) before
 * its first wait unrecorded: the row kept showing the pause while billing went on. From it on, such a resume is
 * recorded and told.
 */
const RESUMES_AT_RUN_START_TOLD = 'resumes-at-run-start-told';
/**
 * A wait continues as new once its run holds this many events, or sooner when Temporal suggests it: every pause,
 * resume and cancel is a signal or an update, and a run takes at most 10,000 signals, 2,000 updates and 51,200 events
 * (past those, they are refused and the run is terminated, its billing lost).
 */
const ROLL_OVER_AT_EVENTS = 2_000;
/** Between two workflow-level tries of a failing step: from 5 seconds, doubling, up to an hour. */
const FIRST_RETRY_SECONDS = 5;
const LONGEST_RETRY_SECONDS = 3600;
/**
 * A step failing for this long is given up: the workflow fails, still marked `BillingStalled`, for an operator
 * (an outage or a refused statement that a week did not mend will not mend by itself). No billing retries forever.
 */
const GIVE_UP_AFTER_MS = 7 * 24 * 3600 * 1000;

export interface SubscriptionWorkflowInput {
  readonly tenantId: number;
  readonly subscriptionId: number;
  readonly plan: SubscriptionPlan;
  readonly settings: PaymentSettings;
  /** The billing period the next charge pays (1 is the first after the initial payment). */
  readonly period: number;
  /** Dunning retries already made for this period (those of `notProcessed` included). */
  readonly retries: number;
  /** This period's rebills the gateway could not process so far (none: undefined): since when, and how many. */
  readonly notProcessed?: { readonly since: string; readonly count: number };
  /** Seconds until the next charge (a period, the trial, or a dunning delay). */
  readonly waitSeconds: number;
  readonly paused: boolean;
  /** Pauses already told during this wait (a wait continued as new carries them, so each pause keeps its own event). */
  readonly pauses?: number;
  /** Paused, and that pause already recorded and told (a wait continued as new while paused). */
  readonly pauseTold?: boolean;
  /** Paused by the gateway itself, and why (a pause the merchant asked for has none): recorded and told with the pause. */
  readonly pauseReason?: PauseReason;
  /** When the charge falls due (a wait continued as new keeps its due time exactly); else `waitSeconds` from the run's start. */
  readonly dueAt?: string;
  /**
   * The try of this period whose charge was left uncertain (its attempt number), to ask the processor about before
   * the period is charged again; kept through every continue-as-new of the wait, paused or resumed.
   */
  readonly uncertainAttempt?: number;
}

/** A rebill ready to charge. */
type ChargePlan = Extract<Awaited<ReturnType<Activities['prepareRebill']>>, { kind: 'charge' }>;
type NothingToCharge = Extract<Awaited<ReturnType<Activities['prepareRebill']>>, { kind: 'none' }>;

/**
 * The `cancel_reason` of a subscription with nothing to charge: the reason it was cancelled with (directly, while no
 * billing ran), `blocked` when its card or e-mail was blocklisted since the checkout, `no_card_on_file` without a card.
 */
function endReasonOf(none: NothingToCharge): string {
  if (none.reason === 'cancelled') return none.cancelReason ?? 'cancelled';
  return none.reason === 'blocked' ? 'blocked' : 'no_card_on_file';
}

/** What a rebill's webhooks tell of its charge. */
interface RebillEvent {
  readonly period: number;
  readonly attempt: number;
  readonly orderId: number;
  /** The rebill's last transaction; empty when its payment ended without a result. */
  readonly transactionId: string;
  readonly statusId: number;
  readonly amount: string;
  readonly currency: string;
}

export interface SubscriptionEnd {
  readonly reason: string;
  readonly period: number;
}

/**
 * A subscription's recurring billing (Temporal's subscription pattern): wait for the period (or the dunning
 * delay), charge the recurring amount through the payment workflow (the same MID selection, caps and cascade,
 * the stored card without CVV as a merchant-initiated transaction), record the outcome and tell the tenant, then
 * continue as new for the next period so the history stays small. A hard decline, an exhausted dunning schedule or
 * a cancel ends it; pause holds the next charge until resumed. A cancel during a charge lets that charge finish.
 * A rebill that may have charged the card though it failed (or whose payment ended without a result) is never charged
 * again on its own: billing pauses for the merchant, and a resume asks the processor about it before anything is sent. A failing step never ends it: database steps are tried again after durable sleeps for as long as it takes (the
 * subscription shows as stalled meanwhile), and a webhook that cannot be recorded is logged and skipped.
 */
export async function subscriptionWorkflow(input: SubscriptionWorkflowInput): Promise<SubscriptionEnd> {
  let paused = input.paused;
  // A reason belongs to the pause it came with: a run that starts unpaused has none, whatever its input carried.
  let pauseReason = input.paused ? input.pauseReason : undefined;
  let cancelReason: string | undefined;
  setHandler(cancelSubscriptionSignal, ({ reason }) => void (cancelReason ??= reason ?? 'cancelled_by_merchant'));
  setHandler(pauseSubscriptionSignal, () => void (paused = true));
  setHandler(resumeSubscriptionSignal, () => void (paused = false));
  /**
   * Pauses and resumes asked as updates, and how many of them the wait has acted on: each is answered once the wait
   * has recorded and told the state it left (so concurrent ones are answered in the order billing took them), or at
   * once, `held`, while no wait runs (a charge or the end under way: the row shows it when that is over). Every run
   * begins with the wait, so updates taken with a run's first task are waiting ones.
   */
  let actionsAsked = 0;
  let actionsSettled = 0;
  let waiting = true;
  setHandler(
    billingActionUpdate,
    async (action): Promise<BillingActionOutcome> => {
      paused = action === 'pause';
      const asked = ++actionsAsked;
      await condition(() => actionsSettled >= asked || !waiting);
      return actionsSettled >= asked ? 'applied' : 'held';
    },
    {
      validator: (action) => {
        if (action !== 'pause' && action !== 'resume') throw ApplicationFailure.nonRetryable(`Unknown billing action: ${String(action)}`);
      },
    },
  );
  const unsettled = () => actionsSettled < actionsAsked;
  /** A step failing since; shown by the progress query and the `Outcome` search attribute `BillingStalled`. */
  let stalled: BillingStall | undefined;
  setHandler(subscriptionProgressQuery, () => ({ period: input.period, retries: input.retries, paused, cancelRequested: cancelReason !== undefined, ...(stalled ? { stalled } : {}) }));

  const dueAt = input.dueAt === undefined ? Date.now() + input.waitSeconds * 1000 : Date.parse(input.dueAt);
  /** Pauses during this wait: each is its own event (and webhook-id); the first keeps the key it always had. */
  let pauses = input.pauses ?? 0;
  let pauseTold = input.pauseTold ?? false;
  /**
   * The try of this period whose charge was left uncertain, asked about before the period is charged again. A run
   * paused for one before it was carried in the input starts paused with that reason, its last try (attempt
   * `retries - 1`) being that charge.
   */
  let uncertainAttempt = input.uncertainAttempt ?? (input.paused && input.pauseReason === 'charge_uncertain' ? input.retries - 1 : undefined);
  /** When the charge (or what was found of an uncertain one) ended: the next charge is due a period or a delay after it. */
  let now = Date.now();
  let rebill: ChargePlan;
  for (;;) {
    const cancelled = await waitUntilDue();
    if (cancelled) return cancelled;
    // A run of before the patch charged anew (and may have prepared that try already): it goes on so.
    if (uncertainAttempt !== undefined && !patched(ASK_BEFORE_CHARGING_AGAIN)) uncertainAttempt = undefined;
    if (uncertainAttempt !== undefined) {
      const found = await persist(
        'settleUncertainRebill',
        () => settleUncertainRebill({ tenantId: input.tenantId, subscriptionId: input.subscriptionId, period: input.period, attempt: uncertainAttempt!, timeoutMs: input.settings.processorTimeoutMs }),
        { untilCancelled: true },
      );
      if (found === undefined) return end(cancelReason ?? 'cancelled_by_merchant');
      if (found.kind === 'charged') {
        log.warn('The uncertain rebill was charged after all: it pays the period', { subscriptionId: input.subscriptionId, period: input.period, orderId: found.orderId });
        await startWebhookDeliveries(found.deliveries, { schedule: input.settings.webhookSchedule, attemptTimeoutMs: input.settings.webhookTimeoutMs });
        now = Date.now();
        const { orderId, processorTransactionId: transactionId, statusId, amount, currency } = found;
        return renew({ period: input.period, attempt: uncertainAttempt, orderId, transactionId, statusId, amount, currency });
      }
      if (cancelReason !== undefined) return end(cancelReason);
      if (found.kind === 'unknown') {
        // Still not known whether the card was charged: never charged again on a guess. Paused again, and told.
        log.error('The uncertain rebill is still not known to the processor: billing paused again', { subscriptionId: input.subscriptionId, period: input.period, orderId: found.orderId, reason: found.reason });
        paused = true;
        pauseReason = 'charge_uncertain';
        continue;
      }
      // The uncertain try charged nothing: the period is charged anew, under a new order.
      uncertainAttempt = undefined;
    }
    const prepared = await persist('prepareRebill', () => prepareRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: input.retries }), { untilCancelled: true });
    // Cancelled while the step was failing: nothing was charged.
    if (prepared === undefined) return end(cancelReason ?? 'cancelled_by_merchant');
    // The merchant's cancel, received while the step ran, is the reason before what the step found (a blocklisted card).
    if (prepared.kind === 'none') return end(cancelReason ?? endReasonOf(prepared));
    rebill = prepared;
    if (!patched(SIGNALS_BEFORE_CHARGE)) break;
    // A cancel or pause that arrived while the rebill was prepared is honoured before the charge, never after it: a
    // cancel ends here (the rebill never charged is removed), a pause waits again and reuses the rebill once resumed.
    if (cancelReason !== undefined) return end(cancelReason);
    if (!paused) break;
  }
  const ended = await chargeRebill(rebill);
  now = Date.now();
  // The rebill's payment ended without a result (an operator terminated it, say, while it waited on a lost answer):
  // whether the card was charged is not known.
  if (ended === undefined) {
    log.error('Rebill payment ended without a result: billing paused until the merchant resumes it', { subscriptionId: input.subscriptionId, period: input.period, orderId: rebill.orderId });
    return pauseForUncertainCharge({ period: input.period, attempt: input.retries, orderId: rebill.orderId, transactionId: '', statusId: 0, amount: rebill.amount, currency: rebill.currency });
  }
  const result = ended;
  const event: RebillEvent = { period: input.period, attempt: input.retries, orderId: rebill.orderId, transactionId: result.transactionId, statusId: result.statusId, amount: rebill.amount, currency: rebill.currency };
  if (result.chargeSuccess) return renew(event);
  // A failed rebill may have charged the card all the same: its authorization answer was lost and the processor could
  // not be asked about it until the payment gave up, or its approval could not be voided.
  if (rebillNotProcessed(result) && patched(UNCERTAIN_CHARGES_PAUSE) && (await mayHaveCharged(result, rebill.orderId))) {
    log.error('Rebill failed but may have charged the card: billing paused until the merchant resumes it', { subscriptionId: input.subscriptionId, period: input.period, orderId: rebill.orderId });
    return pauseForUncertainCharge(event);
  }
  // A rebill the gateway could not process (no merchant account with room for it, a step of ours failing for good, a
  // processor that never received it) is not the customer's decline: it is tried again on the plan's "other" delays,
  // repeating the last, without using the dunning schedule, for up to 30 days of this period; only then is it dunned
  // like a decline.
  const notProcessedSince = input.notProcessed?.since ?? new Date(now).toISOString();
  const gatewayCouldNotProcess = rebillNotProcessed(result) || (rebillNeverReachedProcessor(result) && patched(PROCESSOR_OUTAGES_ARE_NOT_DECLINES));
  if (gatewayCouldNotProcess && now - Date.parse(notProcessedSince) < NOT_PROCESSED_RETRY_LIMIT_SECONDS * 1000 && patched(GATEWAY_FAILURES_ARE_NOT_DECLINES)) {
    const count = input.notProcessed?.count ?? 0;
    const afterSeconds = notProcessedRetrySeconds(input.plan, count);
    const retryAt = new Date(now + afterSeconds * 1000).toISOString();
    log.warn('Rebill not processed by the gateway; trying again later', { subscriptionId: input.subscriptionId, period: input.period, info: result.info, error: result.error, retryAt });
    await persist('recordRebill', () => recordRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: input.retries, paid: false, statusId: result.statusId, nextBillingAt: retryAt, graceUntil: retryAt }));
    await notify('subscription.payment_failed', `failed-${input.period}-${input.retries}`, { ...event, retryAt });
    return next({ ...input, retries: input.retries + 1, notProcessed: { since: notProcessedSince, count: count + 1 }, waitSeconds: afterSeconds });
  }
  const step = nextDunningStep(result.statusId, input.retries - (input.notProcessed?.count ?? 0), input.plan, patched(DUNNING_CODES) ? 'current' : 'before');
  if (step.kind === 'stop') {
    await persist('recordRebill', () =>
      recordRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: input.retries, paid: false, statusId: result.statusId, nextBillingAt: new Date(now).toISOString(), graceUntil: null }),
    );
    await notify('subscription.payment_failed', `failed-${input.period}-${input.retries}`, { ...event, retryAt: null });
    // A cancel that arrived during the charge was the merchant's word before the decline's: it is the reason.
    return end(cancelReason ?? step.reason);
  }
  const retryAt = new Date(now + step.afterSeconds * 1000).toISOString();
  await persist('recordRebill', () => recordRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: input.retries, paid: false, statusId: result.statusId, nextBillingAt: retryAt, graceUntil: retryAt }));
  await notify('subscription.payment_failed', `failed-${input.period}-${input.retries}`, { ...event, retryAt });
  return next({ ...input, retries: input.retries + 1, waitSeconds: step.afterSeconds });

  /** The period paid by the try `event` tells of: recorded and told, and the next period waits its full length. */
  async function renew(event: RebillEvent): Promise<SubscriptionEnd> {
    // The checkout's salvaged charge (period 0) paid at last: the first period starts now, after the trial, as it would have at checkout.
    const waitSeconds = periodSeconds(input.plan) + (input.period === 0 ? trialSeconds(input.plan) : 0);
    const nextBillingAt = new Date(now + waitSeconds * 1000).toISOString();
    await persist('recordRebill', () => recordRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: event.attempt, paid: true, statusId: event.statusId, nextBillingAt, graceUntil: null }));
    await notify('subscription.renewed', `renewed-${input.period}`, { ...event, nextBillingAt });
    return next({ ...input, period: input.period + 1, retries: 0, notProcessed: undefined, waitSeconds });
  }

  /**
   * Charges the rebill through the payment workflow; undefined when that payment ended without a result (terminated,
   * timed out).
   */
  async function chargeRebill(rebill: ChargePlan): Promise<PaymentEnd | undefined> {
    try {
      return await executeChild(paymentWorkflow, {
        workflowId: workflowIds.payment(input.tenantId, rebill.orderId),
        // A rebill in flight finishes even if this subscription is ended meanwhile: it is never left half-done.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        args: [
          {
            tenantId: input.tenantId,
            productId: rebill.productId,
            submitOrderId: rebill.orderId,
            amount: rebill.amount,
            currency: rebill.currency,
            email: rebill.email,
            sealedCard: rebill.sealedCard,
            card: rebill.card,
            // A rebill has no session (its lead was paid by the checkout), unless it is the checkout's own charge retried.
            order: { mobileWalletA: false, ...(rebill.partnerSession ? { partnerSession: rebill.partnerSession } : {}) },
            cascade: true,
            threeDSecure: { enabled: false, cancelOnFail: true },
            subscriptionPlan: null,
            resultContext: { email: rebill.email, amount: rebill.amount, bin: rebill.card.bin, last4: rebill.card.last4 },
            settings: input.settings,
            // Its transaction event names the subscription it charges.
            ...(patched(REBILLS_NAME_THEIR_SUBSCRIPTION) ? { rebillOf: input.subscriptionId } : {}),
          },
        ],
      });
    } catch (error) {
      if (!(error instanceof ChildWorkflowFailure) || !patched(UNFINISHED_REBILLS_PAUSE)) throw error;
      return undefined;
    }
  }

  /**
   * Whether a failed rebill may have charged the card: its payment says so (one a worker of before ran says nothing),
   * or its order's records do.
   */
  async function mayHaveCharged(result: PaymentEnd, orderId: number): Promise<boolean> {
    if (result.chargeUncertain && patched(PAYMENTS_TELL_UNCERTAIN_CHARGES)) return true;
    return persist('rebillMayHaveCharged', () => rebillMayHaveCharged({ orderId }));
  }

  /**
   * A rebill that may have charged the card is not charged again under a new order (that could charge the period
   * twice): billing tells a failed payment whose charge is uncertain and pauses until the merchant resumes (the
   * processor is then asked about the order first: `settleUncertainRebill`) or cancels. Not the customer's decline, it
   * takes nothing from the dunning schedule.
   */
  async function pauseForUncertainCharge(event: RebillEvent): Promise<SubscriptionEnd> {
    await notify('subscription.payment_failed', `failed-${input.period}-${input.retries}`, { ...event, retryAt: null, chargeUncertain: true });
    paused = true;
    const notProcessed = { since: input.notProcessed?.since ?? new Date(now).toISOString(), count: (input.notProcessed?.count ?? 0) + 1 };
    return next({ ...input, retries: input.retries + 1, notProcessed, waitSeconds: 0 }, { pauseReason: 'charge_uncertain', uncertainAttempt: input.retries });
  }

  /**
   * Waits for the charge to fall due, holding it while paused (each pause and resume recorded and told); a cancel
   * meanwhile ends the subscription, and its end is returned.
   */
  async function waitUntilDue(): Promise<SubscriptionEnd | undefined> {
    waiting = true;
    try {
      return await waitForTheCharge();
    } finally {
      waiting = false;
    }
  }

  async function waitForTheCharge(): Promise<SubscriptionEnd | undefined> {
    const rollsOver = patched(WAITS_ROLL_OVER);
    const grownLong = () => rollsOver && (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= ROLL_OVER_AT_EVENTS);
    const pause = () => (pauses === 1 ? `${input.period}-${input.retries}` : `${input.period}-${input.retries}-${pauses}`);
    /** Records and tells the resume of the pause told last; the actions asked up to `seen` are then in effect. */
    const tellResumed = async (seen: number) => {
      await persist('markSubscriptionPaused', () => markSubscriptionPaused({ subscriptionId: input.subscriptionId, paused: false }));
      await notify('subscription.resumed', `resumed-${pause()}`, {});
      pauseTold = false;
      pauseReason = undefined;
      actionsSettled = Math.max(actionsSettled, seen);
    };
    for (;;) {
      // Resumed before this run's first wait, the pause told by the run before: recorded and told now.
      if (!paused && pauseTold && patched(RESUMES_AT_RUN_START_TOLD)) {
        await tellResumed(actionsAsked);
        continue;
      }
      const remaining = dueAt - Date.now();
      if (remaining > 0 && !paused) {
        // Not paused, nothing told as paused: the subscription shows every action asked so far.
        actionsSettled = actionsAsked;
        await condition(() => cancelReason !== undefined || paused || grownLong() || unsettled(), remaining);
      }
      if (cancelReason !== undefined) return end(cancelReason);
      if (grownLong()) return rollOver();
      if (paused) {
        const seen = actionsAsked;
        if (!pauseTold) {
          pauses += 1;
          const reason = pauseReason ? { reason: pauseReason } : {};
          await persist('markSubscriptionPaused', () => markSubscriptionPaused({ subscriptionId: input.subscriptionId, paused: true, ...reason }));
          // A pause the merchant asked for has no reason: `null`, as the subscription's `pause_reason` says it.
          await notify('subscription.paused', `paused-${pause()}`, { reason: pauseReason ?? null });
          pauseTold = true;
        }
        actionsSettled = Math.max(actionsSettled, seen);
        await condition(() => !paused || cancelReason !== undefined || grownLong() || unsettled());
        if (cancelReason !== undefined) return end(cancelReason);
        // Still paused: the run grew long. (A resume and a pause in one workflow task also leave it paused: signalled,
        // that goes on through the resume and pauses again, as it always did, so older histories replay.)
        if (paused && grownLong()) return rollOver();
        // Still paused, with actions asked as updates since (a pause again, or a resume a pause then undid): taken as
        // the pause in place.
        if (paused && unsettled()) continue;
        await tellResumed(actionsAsked);
        continue;
      }
      if (Date.now() >= dueAt) return undefined;
    }
  }

  /**
   * The same wait in a fresh run: what is left of it, paused or not, with the pauses already told. A cancel that
   * arrived meanwhile is honoured first.
   */
  async function rollOver(): Promise<SubscriptionEnd> {
    // Actions not yet acted on are held: the next run takes them with the state this one hands over.
    waiting = false;
    await condition(allHandlersFinished);
    if (cancelReason !== undefined) return end(cancelReason);
    log.info('Subscription wait continues as new: its history grew long', { subscriptionId: input.subscriptionId, period: input.period, events: workflowInfo().historyLength });
    const waitSeconds = Math.max(0, (dueAt - Date.now()) / 1000);
    return continueAsNew<typeof subscriptionWorkflow>({
      ...input,
      waitSeconds,
      dueAt: new Date(dueAt).toISOString(),
      paused,
      pauses,
      pauseTold: paused && pauseTold,
      pauseReason: paused ? pauseReason : undefined,
      uncertainAttempt,
    });
  }

  /**
   * The next period or retry in a fresh run, due `waitSeconds` after the charge's end (`now`): the date recorded and
   * told. A cancel that arrived during the charge is honoured first.
   */
  async function next(nextInput: SubscriptionWorkflowInput, options: { pauseReason?: PauseReason; uncertainAttempt?: number } = {}): Promise<SubscriptionEnd> {
    await condition(allHandlersFinished);
    // Cancelled during a charge that paid its period: the period told is the one its next charge would have paid.
    if (cancelReason !== undefined) return end(cancelReason, nextInput.period);
    const dueAt = patched(BILLING_DATES_AS_RECORDED) ? new Date(now + nextInput.waitSeconds * 1000).toISOString() : undefined;
    // A new wait: its pauses are counted (and told) afresh.
    return continueAsNew<typeof subscriptionWorkflow>({
      ...nextInput,
      paused,
      pauses: undefined,
      pauseTold: undefined,
      pauseReason: paused ? options.pauseReason : undefined,
      dueAt,
      uncertainAttempt: options.uncertainAttempt,
    });
  }

  /** Ends the subscription; `period` is the one left unpaid (this run's, unless its charge just paid it). */
  async function end(reason: string, period = input.period): Promise<SubscriptionEnd> {
    // A pause or resume asked meanwhile is answered `held`, and then finds the subscription cancelled.
    waiting = false;
    await persist('endSubscription', () => endSubscription({ subscriptionId: input.subscriptionId, reason }));
    await notify('subscription.cancelled', 'cancelled', { reason, period });
    log.info('Subscription ended', { subscriptionId: input.subscriptionId, reason });
    await condition(allHandlersFinished);
    return { reason, period };
  }

  /**
   * A billing step that must happen (its outcome is money already moved, or the next charge depends on it): a
   * failure is logged and the step tried again after a durable sleep, for up to a week, even a failure Temporal
   * would not retry (a fix may be deployed meanwhile). Meanwhile the subscription shows as stalled. `untilCancelled`:
   * a cancel during the sleep gives up the step (undefined), for steps before a charge.
   */
  async function persist<T>(step: string, run: () => Promise<T>): Promise<T>;
  async function persist<T>(step: string, run: () => Promise<T>, options: { untilCancelled: true }): Promise<T | undefined>;
  async function persist<T>(step: string, run: () => Promise<T>, options: { untilCancelled?: boolean } = {}): Promise<T | undefined> {
    for (let round = 0; ; round++) {
      try {
        const value = await run();
        if (stalled) {
          log.info('Subscription billing step succeeded again', { subscriptionId: input.subscriptionId, step, since: stalled.since });
          stalled = undefined;
          upsertSearchAttributes([{ key: OutcomeAttribute, value: 'Billing' }]);
        }
        return value;
      } catch (error) {
        if (!isActivityFailure(error) || !patched(STEPS_OUTLAST_FAILURES)) throw error;
        const waitSeconds = Math.min(FIRST_RETRY_SECONDS * 2 ** round, LONGEST_RETRY_SECONDS);
        const reason = reasonOf(error);
        if (stalled && Date.now() - Date.parse(stalled.since) >= GIVE_UP_AFTER_MS) {
          log.error('Subscription billing stopped: a step kept failing for a week', { subscriptionId: input.subscriptionId, step, reason, since: stalled.since });
          throw error;
        }
        log.error('Subscription billing step failed; trying again later', { subscriptionId: input.subscriptionId, step, reason, retryInSeconds: waitSeconds });
        if (!stalled) upsertSearchAttributes([{ key: OutcomeAttribute, value: 'BillingStalled' }]);
        stalled = { step, reason, since: stalled?.since ?? new Date().toISOString() };
        if (!options.untilCancelled) await sleep(waitSeconds * 1000);
        else if (await condition(() => cancelReason !== undefined, waitSeconds * 1000)) return undefined;
      }
    }
  }

  /** One webhook per event key of this subscription; deliveries outlive this run. A webhook never changes billing: its failure is logged. */
  async function notify(type: SubscriptionEventType, key: string, data: Record<string, unknown>): Promise<void> {
    let deliveries: Awaited<ReturnType<typeof recordSubscriptionEvent>>;
    try {
      deliveries = await recordSubscriptionEvent({
        tenantId: input.tenantId,
        type,
        eventKey: `subscription/${input.subscriptionId}/${key}`,
        occurredAt: new Date().toISOString(),
        data: { subscriptionId: input.subscriptionId, ...data },
      });
    } catch (error) {
      if (!isActivityFailure(error) || !patched(STEPS_OUTLAST_FAILURES)) throw error;
      log.error('Subscription webhook not recorded', { subscriptionId: input.subscriptionId, type, reason: reasonOf(error) });
      return;
    }
    await startWebhookDeliveries(deliveries, { schedule: input.settings.webhookSchedule, attemptTimeoutMs: input.settings.webhookTimeoutMs });
  }
}

/** A failed activity (a local or child one would be reported the same way); anything else is a bug and fails the workflow. */
function isActivityFailure(error: unknown): error is ActivityFailure | ApplicationFailure | TimeoutFailure {
  return error instanceof ActivityFailure || error instanceof ApplicationFailure || error instanceof TimeoutFailure;
}

/** What a failed activity said, for the log. */
function reasonOf(error: ActivityFailure | ApplicationFailure | TimeoutFailure): string {
  return error instanceof ActivityFailure ? (error.cause?.message ?? error.message) : error.message;
}
