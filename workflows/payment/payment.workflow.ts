import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  proxySinks,
  setHandler,
  sleep,
  type TemporalFailure,
  startChild,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS, WORKER_LOSS_NOTICED_AFTER } from '../contract/call-timeouts.ts';
import { ATTEMPT_NOT_RECORDED, type AttemptOutcome, type AttemptResult, type MerchantCandidate, type UnrecordedAttempt } from '../../domain/payments/attempts.ts';
import { mayCascade } from '../../domain/payments/cascade-policy.ts';
import { closingOf, finalOutcomeOf, type Closing } from '../../domain/payments/closing.ts';
import {
  alreadySubscribedResult,
  buildProcessedResult,
  networkNotSupportedResult,
  noMerchantAccountResult,
  pendingResult,
  unprocessableResult,
  type PaymentView,
  type Settlement,
} from '../../domain/payments/processed-result.ts';
import type { PaymentEnd, SubmitResult } from '../../domain/payments/submit-result.ts';
import type { SubscriptionPlan } from '../../domain/catalog/product.ts';
import { firstChargeWaitSeconds } from '../../domain/subscriptions/dunning.ts';
import { OutcomeAttribute } from '../contract/search-attributes.ts';
import { workflowIds } from '../contract/workflow-ids.ts';
import { startWebhookDeliveries } from '../webhooks/start-deliveries.ts';
import { persistedPartnerSession, type PaymentWorkflowInput } from '../../domain/payments/payment-input.ts';
import { paidLeadOf, paymentOutcomeOf, transactionEventOf, type OutcomeContext } from '../../domain/payments/payment-outcome.ts';
import type { ThreeDSecureRefusal } from '../../domain/payments/payment-runner.ts';
import type { UnprocessedReason } from '../../domain/payments/unprocessed-reason.ts';
import { changeOf, endUndecidedHold, sendDecision, type SentDecision } from './held-authorization-end.ts';
import {
  NOT_AUTHORIZED,
  NO_OPEN_CHALLENGE,
  THREE_D_SECURE_FINISHED,
  capturePaymentUpdate,
  completeThreeDSecureUpdate,
  paymentAnswersQuery,
  submitUpdate,
  supersedeChallengeUpdate,
  voidPaymentUpdate,
  type AuthorizationDecision,
} from '../contract/payment-updates.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';
import type { PaymentAnswerSinks } from '../contract/payment-answers.ts';

/**
 * Short database steps run as local activities: in the worker, inside the workflow task, so a submit
 * answers after fewer Temporal round trips. They are idempotent, so a retry after a crash is safe. They are
 * retried for minutes, since a payment must not fail because the database was briefly away, but not forever:
 * a step still failing then, or failing in a way no retry fixes (text PostgreSQL refuses), ends the payment.
 */
const databaseStepOptions = {
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '5 minutes',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds' },
} as const;
const { openOrderAndReserveAccount, openPaymentOrder, reserveMerchantAccount, settlePaymentOrder, recordUnsentAttempt, recordTransactionEvent, markLeadPaid } =
  proxyLocalActivities<Activities>(databaseStepOptions);

/**
 * What the payment records after its answer (webhook deliveries, the paid lead) is one local activity too. A caller
 * waiting in process has its answer before it runs; the `submit` update answers once the workflow task that holds
 * it completes (a few milliseconds later). An ordinary activity cost the Temporal server a task and a workflow task
 * more per payment: measured, slower at every concurrency (docs/decisions.md).
 */
const { recordPaymentOutcome } = proxyLocalActivities<Activities>(databaseStepOptions);

/**
 * Payments started by an older worker replay the steps they recorded: the order opened and the account reserved
 * as two local activities, and the webhook and lead as local activities before the workflow task completed.
 */
const FEWER_STEPS_BEFORE_THE_ANSWER = 'fewer-steps-before-the-answer';

/**
 * Held authorizations (held for days) whose capture or void the processor refused or never answered were left
 * `authorized` (or voided blindly) before this patch; now the processor is asked and the hold always ends.
 */
const HELD_AUTHORIZATIONS_ALWAYS_END = 'held-authorizations-always-end';
/**
 * Payments started by an older worker replay their first steps one by one: the order opened with the account
 * reserved, the authorization, the settlement. Now one local activity runs them (`tryFirstAttempt`).
 */
const FIRST_ATTEMPT_IN_ONE_STEP = 'first-attempt-in-one-step';

/** Webhook deliveries recorded for the payment, each to start as a durable delivery workflow. */
type Deliveries = readonly { readonly deliveryId: string }[];

/** What the payment's first step found: already subscribed, or the first account with what was done on it. */
type FirstAttempt = Awaited<ReturnType<Activities['tryFirstAttempt']>>;

/** The outcome to search by once a held authorization ended. */
const OUTCOME_OF_CHANGE = { captured: 'Success', voided: 'Voided', expired: 'Expired', failed: 'Failed' } as const;

/** A caller waiting in the process that runs the answering workflow task gets the answer from here at once. */
const { paymentAnswers } = proxySinks<PaymentAnswerSinks>();

/** Keeps the card of a new subscription for its rebills (re-sealed without CVV). */
const { keepCardForRebills } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '5 minutes',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/** Processor calls other than the authorization itself are safe to retry. */
const { inquireAttempt, voidAuthorization, holdApprovedAuthorization, recordAuthorizationChange } = proxyActivities<Activities>({
  startToCloseTimeout: OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS,
  heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
  retry: { maximumAttempts: 20, initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * The least time between two processor asks of a challenge's completion. Within it a completion is answered "not
 * completed yet" (409) at once, without an event in the payment's history: the caller asks again.
 */
const MIN_COMPLETION_ASK_INTERVAL_MS = 1_000;
/** Processor asks a challenge may take at most: about half of Temporal's 2,000 updates per workflow run. */
const MAX_COMPLETION_ASKS = 1_000;

/** The time between two asks of a challenge's completion: a second, or the challenge's time limit over a thousand. */
function completionAskIntervalMs(threeDSecureTimeoutSeconds: number): number {
  return Math.max(MIN_COMPLETION_ASK_INTERVAL_MS, (threeDSecureTimeoutSeconds * 1_000) / MAX_COMPLETION_ASKS);
}

/** How many times an authorization the processor never saw is sent again (same reference, so never twice). */
const MAX_RESENDS = 2;
/**
 * Payments started before this patch ended `failed` when the processor could not be asked about a lost answer; they
 * replay so. From it on, the inquiry is asked again after durable sleeps (`inquireUntilKnown`).
 */
const INQUIRE_UNTIL_KNOWN = 'inquire-until-known';
/** Payments started before this patch kept a new subscription's card before starting its billing; from it on, after. */
const BILLING_BEFORE_ITS_CARD = 'billing-starts-before-its-card-is-kept';
/**
 * Payments before this patch read an attempt the database refused to record as an unknown outcome and inquired; an
 * old worker may drive a payment whose new activity raised `AttemptNotRecorded`, so the new path is taken only from it on.
 */
const ATTEMPT_NOT_RECORDED_ENDS = 'attempt-not-recorded-ends-the-payment';
/** Between two inquiries of a lost answer the processor could not be asked about: from 10 seconds, doubling, to an hour. */
const FIRST_INQUIRY_WAIT_SECONDS = 10;
const LONGEST_INQUIRY_WAIT_SECONDS = 3600;
/**
 * An inquiry failing this long is given up (logged for an operator), as a held authorization is: a card network's
 * hold. The setting `unknownOutcomeGiveUpSeconds` overrides it; payments started before it was one have none.
 */
const INQUIRIES_GIVE_UP_AFTER_SECONDS = 7 * 24 * 3600;
/**
 * Inquiries run by a worker of before this patch gave up after a week whatever the payment's settings said; their
 * histories replay so (a setting below a week, read on replay, would give up where they slept).
 */
const INQUIRY_GIVE_UP_SETTING = 'inquiry-give-up-setting';
/**
 * Before this patch a take-over ended the wait only when the payment's own code next ran, so a completion accepted in
 * the same workflow task, after it, still asked the processor and decided; from it on the take-over ends the wait at
 * once, as a void does, and that completion is told the session expired.
 */
const TAKE_OVER_ENDS_THE_WAIT_AT_ONCE = 'take-over-ends-the-wait-at-once';
/** Time an authorization activity may take beyond the processor timeout (database write, scheduling). */
const AUTHORIZATION_MARGIN_MS = 5_000;
/** How long a held authorization waits for its capture when the settings name no period (a processor's usual hold). */
const DEFAULT_AUTHORIZATION_HOLD_SECONDS = 7 * 24 * 3600;

/**
 * A failed activity. Temporal reports a local activity's failure as the failure itself (an ApplicationFailure,
 * a TimeoutFailure) rather than wrapped in an ActivityFailure; the payment steps throw neither themselves.
 */
function isActivityFailure(error: unknown): error is TemporalFailure {
  return error instanceof ActivityFailure || error instanceof ApplicationFailure || error instanceof TimeoutFailure;
}

/** Whether retrying the failed activity again could never help (its failure says so). */
function failedForGood(error: TemporalFailure): boolean {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && cause.nonRetryable === true;
}

/**
 * The details of an attempt the processor answered and PostgreSQL refused to record for good, or undefined for any
 * other failure. A new worker's activity may raise it for a payment of before, so the paths it takes are patched
 * (`ATTEMPT_NOT_RECORDED_ENDS`).
 */
function unrecordedAttemptOf(error: TemporalFailure): UnrecordedAttempt | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && cause.type === ATTEMPT_NOT_RECORDED ? ((cause.details?.[0] as UnrecordedAttempt | undefined) ?? {}) : undefined;
}

/** What a failed activity said, for the log. */
const reasonOf = (error: TemporalFailure) => (error instanceof ActivityFailure ? (error.cause?.message ?? error.message) : error.message);

/** A completion refused without changing anything; the caller's adapter reads the kind from the failure's type. */
function refusal(kind: ThreeDSecureRefusal, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, kind);
}

/** Why a challenge's wait is over, for a completion that comes after: voided (`POST /payments/{id}/void`) or expired. */
function waitOver(challenge: Challenge): ApplicationFailure {
  return challenge.voided ? refusal('voided', 'This 3-D Secure payment was voided') : refusal('expired', 'This 3-D Secure session has expired');
}

/** A challenge the payment waits on, and where its completion stands. */
interface Challenge {
  readonly threeDSecureId: string;
  readonly account: MerchantCandidate;
  readonly attemptNumber: number;
  readonly processorTransactionId: string;
  /** The processor's final answer, once the cardholder finished and a completion asked for it. */
  completed?: AttemptResult;
  /** A completion that failed for good: the payment ends as failed. */
  failure?: TemporalFailure;
  /** The one processor call under way, shared by concurrent completions; resolves to whether it finished. */
  asking?: Promise<boolean>;
  /** The wait is over: no new completion is asked for. */
  expiring: boolean;
  /** When the processor was last asked (workflow time), for the pace of completions asked before the cardholder finished. */
  lastAskedAt?: number;
  /** A new submit of the e-mail to the plan asked for the claim this payment holds: the wait ends now. */
  superseded?: boolean;
  /** The payment was voided while it waited (`POST /payments/{id}/void`): the wait ends now, the payment is canceled. */
  voided?: boolean;
  /** How the wait ended without a completion, once the order was settled so: what a void answers from. */
  ended?: 'expired' | 'voided';
}

/** An approved authorization made with `capture: false`, waiting for its capture or void. */
interface Hold {
  readonly transactionId: string;
  readonly account: MerchantCandidate;
  readonly processorTransactionId: string;
  decision?: 'capture' | 'void';
  /** How it ended; the capture and void updates answer with it. */
  outcome?: AuthorizationDecision;
}

/**
 * A card submit, from the first authorization to the last webhook:
 * open the order (claiming the subscription of a plan), choose a merchant account and reserve the amount on
 * its monthly cap, authorize (asking the processor when an answer is lost), cascade a cascadable decline once
 * to another account, wait for a 3-D Secure challenge when needed, settle the order and subscription, answer
 * the caller, then notify the tenant's endpoints. An authorization made with `capture: false` is held until a
 * capture or void decides it, or a durable timer voids it. A step that fails for good ends the payment as failed,
 * with anything authorized voided, so no payment runs forever and none is left charged without an answer.
 */
export async function paymentWorkflow(input: PaymentWorkflowInput): Promise<PaymentEnd> {
  // An authorization is never retried by Temporal: if it times out, the outcome is unknown and the
  // processor is asked (below) before anything else happens. It runs as a local activity (one Temporal
  // round trip less per submit): if the worker dies mid-call, the new worker sends it again under the
  // same reference, which the processor deduplicates, so the card is still charged once. The payment's
  // first step (order, account, authorization, settlement) is not retried either: when it fails, the
  // payment goes on step by step, each step finding what the failed one recorded.
  const { authorizeAttempt, tryFirstAttempt } = proxyLocalActivities<Activities>({
    startToCloseTimeout: input.settings.processorTimeoutMs + AUTHORIZATION_MARGIN_MS,
    retry: { maximumAttempts: 1 },
  });
  // A completion is asked while its caller waits: a few quick tries, then "try again", the challenge still open.
  const { completeThreeDSecure } = proxyActivities<Activities>({
    startToCloseTimeout: input.settings.processorTimeoutMs + AUTHORIZATION_MARGIN_MS,
    heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
    retry: { maximumAttempts: 3, initialInterval: '500 milliseconds', backoffCoefficient: 2 },
  });
  let answer: SubmitResult | undefined;
  let finalResult: SubmitResult | undefined;
  let challenge: Challenge | undefined;
  /** Who the results are for; a session issued for the 3-D Secure completion joins it. */
  let payment: PaymentView = input;
  const attempts: AttemptResult[] = [];
  /** Whose outcome the tenant is told of. */
  const outcomeContext: OutcomeContext = {
    tenantId: input.tenantId,
    productId: input.productId,
    amount: input.amount,
    currency: input.currency,
    partnerSession: input.order.partnerSession,
    ...(input.rebillOf ? { subscriptionId: input.rebillOf } : {}),
  };
  let hold: Hold | undefined;
  /**
   * The payment ends failed though the card may have been charged: an authorization's outcome stayed unknown when the
   * inquiries gave up, or an approval could not be voided. Its end says so, for billing (never its answer).
   */
  let chargeUncertain = false;

  /** The caller's answer, given once: to the `submit` update, and through the sink to a caller in this process. */
  const giveAnswer = (result: SubmitResult) => {
    if (answer !== undefined) return;
    answer = result;
    paymentAnswers.answered(result);
  };
  /** Before an ordinary activity the answer waits on: its caller in process turns to the `submit` update. */
  const answerAfterAnOrdinaryActivity = () => {
    if (answer === undefined) paymentAnswers.answerComesLater();
  };

  setHandler(submitUpdate, async () => {
    await condition(() => answer !== undefined);
    return answer!;
  });
  setHandler(paymentAnswersQuery, () => ({ first: answer, final: finalResult }));
  // A checkout page may poll the completion while the cardholder is still at the challenge: the processor is asked at
  // most once per interval.
  const askIntervalMs = completionAskIntervalMs(input.settings.threeDSecureTimeoutSeconds);
  setHandler(completeThreeDSecureUpdate, () => completeChallenge(challenge!), {
    // A refusal here changes nothing and is not even written to the history.
    validator: ({ threeDSecureId }) => {
      if (!challenge || challenge.threeDSecureId !== threeDSecureId) throw refusal('unknown', 'Unknown threeDSecureId');
      // The wait is over, but a processor call under way still decides: a completion sent meanwhile waits for it.
      if (challenge.expiring && !challenge.completed && !challenge.asking) throw waitOver(challenge);
      if (finalResult !== undefined) throw ApplicationFailure.nonRetryable('The payment has its final result; read it with the answers query', THREE_D_SECURE_FINISHED);
      const askedLately = challenge.lastAskedAt !== undefined && Date.now() - challenge.lastAskedAt < askIntervalMs;
      if (!challenge.completed && !challenge.asking && askedLately) throw refusal('challenge_pending', 'The cardholder has not completed the 3-D Secure challenge yet');
    },
  });

  // A checkout abandoned at its challenge must not keep the e-mail from subscribing with another card until it expires.
  setHandler(
    supersedeChallengeUpdate,
    async () => {
      challenge!.superseded = true;
      // Accepted first, it decides first: a completion accepted after it, even in the same workflow task, finds the wait over.
      if (patched(TAKE_OVER_ENDS_THE_WAIT_AT_ONCE)) challenge!.expiring = true;
      await condition(() => finalResult !== undefined);
      return challenge!.completed ? 'completed' : 'expired';
    },
    {
      validator: () => {
        if (!challenge || challenge.completed || challenge.failure || challenge.expiring) throw ApplicationFailure.nonRetryable('This payment waits on no open 3-D Secure challenge', NO_OPEN_CHALLENGE);
      },
    },
  );

  // A capture or void is asked of a held authorization only; a repeat of the same decision gets the same answer.
  const decide = (decision: 'capture' | 'void') => async (): Promise<AuthorizationDecision> => {
    hold!.decision ??= decision;
    await condition(() => hold!.outcome !== undefined);
    return hold!.outcome!;
  };
  const onlyWhileHeld = (decision: 'capture' | 'void') => () => {
    if (!hold || (hold.decision !== undefined && hold.decision !== decision)) throw ApplicationFailure.nonRetryable(`No authorization of this payment waits for a ${decision}`, NOT_AUTHORIZED);
  };
  setHandler(capturePaymentUpdate, decide('capture'), { validator: onlyWhileHeld('capture') });
  // A void of a payment still waiting on its 3-D Secure challenge cancels it, the challenge ended as if expired, unless
  // a completion already under way decides first: an authorization it then holds is voided, a charge is refused. It is
  // answered from how the payment ended, never "voided" for a payment that failed.
  const voidOpenChallenge = async (): Promise<AuthorizationDecision> => {
    const waiting = challenge!;
    waiting.voided = true;
    // At once, not when the payment's own code next runs: a completion in the same activation must find the wait over.
    waiting.expiring = true;
    await condition(() => finalResult !== undefined || hold !== undefined);
    if (hold) return decide('void')();
    if (waiting.ended === 'voided') return { state: 'voided', statusId: StatusId.VOIDED };
    if (waiting.completed) throw ApplicationFailure.nonRetryable('The 3-D Secure challenge was completed first: no authorization of this payment waits for a void', NOT_AUTHORIZED);
    if (waiting.ended === 'expired') throw ApplicationFailure.nonRetryable('The 3-D Secure challenge expired first: nothing of this payment is left to void', NOT_AUTHORIZED);
    return { state: 'failed', statusId: StatusId.SYSTEM_TIMEOUT };
  };
  /** Until its payment's end: a completion under way decides first, and a void still being ended is answered. */
  const challengeVoidable = () => challenge !== undefined && !challenge.failure && (finalResult === undefined || challenge.voided === true);
  setHandler(voidPaymentUpdate, () => (hold || !challengeVoidable() ? decide('void')() : voidOpenChallenge()), {
    validator: () => {
      if (hold || !challengeVoidable()) onlyWhileHeld('void')();
    },
  });

  let result: SubmitResult;
  try {
    result = await pay();
  } catch (error) {
    if (!isActivityFailure(error)) throw error;
    if (hold && !hold.outcome) hold.outcome = { state: 'failed', statusId: StatusId.SYSTEM_TIMEOUT };
    result = await endFailed(error);
  }
  // Completions still being answered get their answer before the payment closes.
  await condition(allHandlersFinished);
  return chargeUncertain ? { ...result, chargeUncertain } : result;

  async function pay(): Promise<SubmitResult> {
    const opened = await openOrder();
    if (opened.alreadySubscribed) return endUnprocessed(alreadySubscribedResult(payment), 'AlreadySubscribed', 'already_subscribed');

    const first = opened.firstAccount;
    if (!first.account) {
      // Live accounts there are, but none takes this network: the card is not supported, not the accounts full.
      if (first.networkRefused) return endUnprocessed(networkNotSupportedResult(payment, input.card.network), 'Failed', 'card_network_not_supported');
      return endUnprocessed(noMerchantAccountResult(payment), 'NoMerchantAccount', 'no_merchant_account');
    }
    let account = first.account;
    let attemptNumber = 1;
    let attempt = first.refusal === undefined ? await authorize(account, attemptNumber, opened.attempt) : await declineUnsent(account, attemptNumber, first.refusal);
    // The first step settled the order: its answer ended the payment (no cascade, challenge or hold follows).
    if (opened.settlement) return endSettled(account, closingOf(finalOutcomeOf(attempt.outcome), input.subscriptionPlan), opened.settlement, opened.told);
    if (input.cascade && attempt.outcome.kind === 'declined' && mayCascade(attempt.outcome.statusId, account)) {
      const second = await chooseAccount([account.merchantAccountId], account.acquiringBank);
      if (second.account && second.refusal === undefined) {
        account = second.account;
        attemptNumber = 2;
        attempt = await authorize(account, attemptNumber);
      }
    }

    if (attempt.outcome.kind === 'challenge') {
      const waiting = await openChallenge(account, attemptNumber, attempt.outcome);
      const finished = await condition(
        () => waiting.completed !== undefined || waiting.failure !== undefined || waiting.superseded === true || waiting.voided === true,
        input.settings.threeDSecureTimeoutSeconds * 1000,
      );
      if (!finished || waiting.superseded || waiting.voided) {
        if (waiting.voided) log.info('3-D Secure challenge given up: the payment was voided', { submitOrderId: input.submitOrderId });
        else if (waiting.superseded) log.info('3-D Secure challenge given up for a new submit of the e-mail to the plan', { submitOrderId: input.submitOrderId });
        // A completion already asking the processor decides before the expiry does.
        waiting.expiring = true;
        await condition(() => waiting.asking === undefined);
      }
      if (waiting.failure) throw waiting.failure;
      if (!waiting.completed) return endOpenChallenge(waiting, waiting.voided ? 'voided' : 'expired');
      attempt = waiting.completed;
    }

    const outcome = attempt.outcome;
    if (outcome.kind === 'approved' && input.capture === false) return holdForCapture(account, attempt, outcome.processorTransactionId);
    const closing = closingOf(finalOutcomeOf(outcome), input.subscriptionPlan);
    const settlement: Settlement = await settlePaymentOrder({
      tenantId: input.tenantId,
      productId: input.productId,
      submitOrderId: input.submitOrderId,
      email: input.email,
      state: closing.state,
      subscription: closing.subscription,
    });
    return endSettled(account, closing, settlement);
  }

  /**
   * The order settled as the last attempt's answer says; a subscription it created starts billing. `told`: the first
   * step recorded what the tenant is told, these deliveries.
   */
  function endSettled(account: MerchantCandidate, closing: Closing, settlement: Settlement, told?: Deliveries): Promise<SubmitResult> {
    const plan = input.subscriptionPlan;
    const subscriptionId = settlement.subscriptionId;
    const declinedStatusId = closing.state === 'approved' ? undefined : closing.statusId;
    const billing = plan && subscriptionId > 0 ? () => startRebills(plan, subscriptionId, declinedStatusId) : undefined;
    return endProcessed(buildProcessedResult(payment, account, attempts, settlement, { salvage: closing.salvage }), { startBilling: billing, told });
  }

  /**
   * The subscription this payment created bills on in its own long-running workflow, from the card kept without its
   * CVV: the first period after the trial, or (a salvaged decline in grace) a dunning retry of the first charge.
   * After the answer and never undoing the payment: a failure here is logged, and the subscription then ends at its
   * first rebill for want of a card.
   */
  async function startRebills(plan: SubscriptionPlan, subscriptionId: number, declinedStatusId?: number): Promise<void> {
    const keepCard = async () => {
      try {
        await keepCardForRebills({ subscriptionId, sealedCard: input.sealedCard });
      } catch (error) {
        if (!isActivityFailure(error)) throw error;
        log.error('Card not kept for rebills', { subscriptionId, reason: reasonOf(error) });
      }
    };
    const waitSeconds = firstChargeWaitSeconds(plan, declinedStatusId);
    // Started by name: the subscription workflow starts payments itself, and workflow modules must not import in a cycle.
    const startBilling = () =>
      startChild('subscriptionWorkflow', {
        workflowId: workflowIds.subscription(input.tenantId, subscriptionId),
        args: [{ tenantId: input.tenantId, subscriptionId, plan, settings: input.settings, period: declinedStatusId === undefined ? 1 : 0, retries: declinedStatusId === undefined ? 0 : 1, waitSeconds, paused: false }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    // The billing workflow first: a cancel or pause sent right after the answer finds it, however long keeping the card
    // takes (the card is read at the first charge, a trial and a period later).
    if (patched(BILLING_BEFORE_ITS_CARD)) {
      await startBilling();
      await keepCard();
    } else {
      await keepCard();
      await startBilling();
    }
  }

  /**
   * The final result: the caller's answer unless one was given (a Pending), the outcome to search by, the tenant
   * told (unless the first step did: `told`), and a new subscription's billing started alongside (so it can be
   * paused soon after the answer).
   */
  async function endProcessed(result: SubmitResult, options: { outcome?: string; startBilling?: () => Promise<void>; told?: Deliveries } = {}): Promise<SubmitResult> {
    const { outcome = result.info, startBilling, told } = options;
    finalResult = result;
    giveAnswer(result);
    upsertSearchAttributes([{ key: OutcomeAttribute, value: outcome }]);
    const tell = () => (told ? startDeliveries(told) : tellTheTenant(result));
    if (patched(FEWER_STEPS_BEFORE_THE_ANSWER)) {
      await Promise.all([tell(), startBilling?.()]);
    } else {
      await tell();
      await startBilling?.();
    }
    return result;
  }

  /**
   * `capture: false`: answer the authorization (charged nothing yet), then wait for a capture or void, or void it
   * when the hold period ends. Captured, the payment is charged (and its lead paid); each change is a webhook. A
   * decision the processor refuses or never answers ends the hold as the processor's status inquiry says
   * (`held-authorization-end.ts`), so no hold stays `requires_capture` and none is voided without knowing.
   */
  async function holdForCapture(account: MerchantCandidate, attempt: AttemptResult, processorTransactionId: string): Promise<SubmitResult> {
    answerAfterAnOrdinaryActivity();
    await holdApprovedAuthorization({ submitOrderId: input.submitOrderId, transactionId: attempt.transactionId });
    const settlement: Settlement = { orderId: input.submitOrderId, subscriptionId: 0 };
    const authorized: SubmitResult = { ...buildProcessedResult(payment, account, attempts, settlement, { salvage: false }), chargeSuccess: false };
    // Held before the caller hears of it: a capture or void may follow the answer at once.
    const held: Hold = { transactionId: attempt.transactionId, account, processorTransactionId };
    hold = held;
    finalResult = authorized;
    giveAnswer(authorized);
    upsertSearchAttributes([{ key: OutcomeAttribute, value: 'Authorized' }]);
    await tellTheTenant(authorized);

    const holdSeconds = input.settings.authorizationVoidAfterSeconds ?? DEFAULT_AUTHORIZATION_HOLD_SECONDS;
    await condition(() => held.decision !== undefined, holdSeconds * 1000);
    held.decision ??= 'void';
    const target = { submitOrderId: input.submitOrderId, transactionId: held.transactionId, gateway: account.gateway, processorTransactionId, timeoutMs: input.settings.processorTimeoutMs };
    let change: ReturnType<typeof changeOf> | undefined;
    let sent: SentDecision;
    try {
      sent = await sendDecision(held.decision, target);
    } catch (error) {
      // No answer: a capture may have charged the card, so the processor is asked (below) before anything is voided.
      if (!isActivityFailure(error) || !patched(HELD_AUTHORIZATIONS_ALWAYS_END)) throw error;
      sent = { kind: 'unanswered' };
    }
    if (sent.kind === 'done') {
      held.outcome = { state: held.decision === 'capture' ? 'approved' : 'voided', statusId: sent.statusId };
      change = held.decision === 'capture' ? 'captured' : 'voided';
    } else if (!patched(HELD_AUTHORIZATIONS_ALWAYS_END)) {
      // How payments that refused their decision before this patch replay: the hold was left as it was.
      held.outcome = { state: 'failed', statusId: sent.kind === 'refused' ? sent.statusId : StatusId.SYSTEM_TIMEOUT };
    } else {
      const ended = await endUndecidedHold(held.decision, target, sent);
      held.outcome = { state: ended.state, statusId: ended.statusId };
      change = changeOf(ended.state);
    }
    if (change) {
      upsertSearchAttributes([{ key: OutcomeAttribute, value: OUTCOME_OF_CHANGE[change] }]);
      const deliveries = await recordAuthorizationChange({
        tenantId: input.tenantId,
        submitOrderId: input.submitOrderId,
        change,
        statusId: held.outcome.statusId,
        amount: input.amount,
        currency: input.currency,
        occurredAt: new Date().toISOString(),
      }).catch((error: unknown) => {
        if (!isActivityFailure(error)) throw error;
        log.error('Authorization change webhook not recorded', { reason: reasonOf(error) });
        return [];
      });
      await startDeliveries(deliveries);
    }
    if (change === 'captured') await markPaidLead({ ...authorized, chargeSuccess: true });
    return change === 'captured' ? { ...authorized, chargeSuccess: true } : authorized;
  }

  /**
   * Opens the order (claiming the plan's subscription) and reserves the first attempt's account on its monthly cap;
   * in the same local activity, authorizes on that account and settles the order when the answer ends the payment,
   * so the common payment answers after one step. Should that step fail (the database away, the worker lost), the
   * payment goes on step by step from the start: each step finds what the failed one recorded, and an attempt
   * whose answer was lost is asked about before anything else. Only a failure no retry fixes before anything was
   * sent ends the payment at once (the step reports any failure after the authorization as one to go on from).
   */
  async function openOrder(): Promise<FirstAttempt> {
    const order = {
      tenantId: input.tenantId,
      productId: input.productId,
      submitOrderId: input.submitOrderId,
      workflowId: workflowInfo().workflowId,
      email: input.email,
      amount: input.amount,
      currency: input.currency,
      order: input.order,
      subscription: input.subscriptionPlan ? { recurringAmount: input.subscriptionPlan.recurringAmount } : undefined,
      card: input.card,
      captureMethod: input.capture === false ? ('manual' as const) : ('automatic' as const),
    };
    if (patched(FIRST_ATTEMPT_IN_ONE_STEP)) {
      try {
        return await tryFirstAttempt({
          ...order,
          firstAccount: accountRequest([]),
          authorization: authorizationRequest(),
          terms: { cascade: input.cascade, ...(input.capture === false ? { capture: false } : {}) },
          plan: input.subscriptionPlan,
          tellTheTenant: { resultContext: input.resultContext, ...(input.rebillOf ? { rebillOf: input.rebillOf } : {}) },
        });
      } catch (error) {
        // Failed for good opening the order (text PostgreSQL refuses): nothing was sent, the payment ends failed.
        if (!isActivityFailure(error) || failedForGood(error)) throw error;
        log.warn('The first step failed; the payment goes on step by step', { reason: reasonOf(error) });
      }
    }
    if (patched(FEWER_STEPS_BEFORE_THE_ANSWER)) return openOrderAndReserveAccount({ ...order, firstAccount: accountRequest([]) });
    const { alreadySubscribed } = await openPaymentOrder(order);
    return alreadySubscribed ? { alreadySubscribed } : { alreadySubscribed, firstAccount: await chooseAccount([]) };
  }

  /** The account of the next attempt, its amount reserved on the account's monthly cap. */
  function chooseAccount(triedMerchantAccountIds: number[], preferAnotherBankThan?: string) {
    return reserveMerchantAccount(accountRequest(triedMerchantAccountIds, preferAnotherBankThan));
  }

  function accountRequest(triedMerchantAccountIds: number[], preferAnotherBankThan?: string) {
    return {
      tenantId: input.tenantId,
      submitOrderId: input.submitOrderId,
      amount: input.amount,
      currency: input.currency,
      network: input.card.network,
      forcedMerchantAccountId: input.forcedMerchantAccountId,
      triedMerchantAccountIds,
      preferAnotherBankThan,
    };
  }

  /** Nothing was sent to a processor (already subscribed, no eligible account): fail the order and answer. */
  async function endUnprocessed(result: SubmitResult, outcome: string, unprocessedReason: UnprocessedReason): Promise<SubmitResult> {
    await settlePaymentOrder({ tenantId: input.tenantId, productId: input.productId, submitOrderId: input.submitOrderId, email: input.email, state: 'failed', unprocessedReason });
    finalResult = result;
    giveAnswer(result);
    upsertSearchAttributes([{ key: OutcomeAttribute, value: outcome }]);
    return finalResult;
  }

  /**
   * A step failed for good (text PostgreSQL refuses, an outage outlasting the retries, a processor refusing a
   * call): void what the processor authorized, record the order as failed and answer with a clear failure.
   * Each of these steps may fail too (the database is still away); the payment ends all the same.
   */
  async function endFailed(cause: TemporalFailure): Promise<SubmitResult> {
    log.error('Payment ended: a step failed for good', { reason: reasonOf(cause) });
    answerAfterAnOrdinaryActivity();
    // Each authorization by its processor id; a recorded approval is shown voided once the processor voided it.
    const authorized = new Map<string, { gateway: string; recorded?: { submitOrderId: number; transactionId: string } }>();
    for (const { outcome, exchange, transactionId } of attempts) {
      if (outcome.kind === 'approved') authorized.set(outcome.processorTransactionId, { gateway: exchange.gateway, recorded: { submitOrderId: input.submitOrderId, transactionId } });
      else if (outcome.kind === 'challenge') authorized.set(outcome.processorTransactionId, { gateway: exchange.gateway });
    }
    // An approval the processor gave but the database would not record is voided as well: the card keeps nothing.
    const unrecorded = unrecordedAttemptOf(cause)?.authorized;
    if (unrecorded && patched(ATTEMPT_NOT_RECORDED_ENDS)) authorized.set(unrecorded.processorTransactionId, { gateway: unrecorded.gateway });
    for (const [processorTransactionId, { gateway, recorded }] of authorized) {
      const voided = await bestEffort('void', () => voidAuthorization({ gateway, processorTransactionId, timeoutMs: input.settings.processorTimeoutMs, ...(recorded ? { recorded } : {}) }));
      // Refused, unanswered or failed: the card may keep the charge.
      if (voided !== true) chargeUncertain = true;
    }
    await bestEffort('settle', () =>
      settlePaymentOrder({ tenantId: input.tenantId, productId: input.productId, submitOrderId: input.submitOrderId, email: input.email, state: 'failed' }),
    );
    return endProcessed(unprocessableResult(payment, attempts), { outcome: 'Failed' });
  }

  /** A forced account that cannot take the payment declines it without calling the processor. */
  async function declineUnsent(candidate: MerchantCandidate, number: number, statusId: number): Promise<AttemptResult> {
    const result = await recordUnsentAttempt({ ...attemptContext(candidate, number), statusId });
    attempts.push(result);
    return result;
  }

  /**
   * One authorization (`sent`: already sent by the first step); a lost answer is resolved by inquiry, and an unseen one
   * is resent under the same reference.
   */
  async function authorize(candidate: MerchantCandidate, attemptNumber: number, sent?: AttemptResult): Promise<AttemptResult> {
    const context = attemptContext(candidate, attemptNumber);
    const send = async (): Promise<AttemptResult | undefined> => {
      try {
        return await authorizeAttempt({ ...authorizationRequest(), candidate, attemptNumber });
      } catch (error) {
        // Worker lost or timed out: outcome unknown. An answer the database refuses for good ends the payment (voided).
        if (isActivityFailure(error) && !(unrecordedAttemptOf(error) && patched(ATTEMPT_NOT_RECORDED_ENDS))) return undefined;
        throw error;
      }
    };
    let result = sent ?? (await send());
    for (let resend = 0; ; resend++) {
      if (result && result.outcome.kind !== 'unknown') break;
      if (result) attempts.push(result);
      answerAfterAnOrdinaryActivity();
      result = await inquireUntilKnown(context);
      if (result.outcome.kind !== 'not_found' || resend >= MAX_RESENDS) break;
      attempts.push(result);
      // The processor never saw it: sending again under the same reference cannot charge twice.
      result = await send();
    }
    attempts.push(result);
    return result.outcome.kind === 'not_found' ? { ...result, outcome: { kind: 'declined', statusId: StatusId.SYSTEM_TIMEOUT } } : result;
  }

  /**
   * What became of an attempt whose answer was lost. The money may have moved, so an inquiry that fails (the
   * processor unreachable through the activity's retries, or refusing our call: credentials, configuration) is never
   * read as a decline: it is asked again after a durable sleep, for up to a week (then logged and failed, as before).
   * Meanwhile the caller has the gateway's 503 ("still being processed"), and the same Idempotency-Key answers once
   * the outcome is known.
   */
  async function inquireUntilKnown(context: ReturnType<typeof attemptContext>): Promise<AttemptResult> {
    const since = Date.now();
    for (let round = 0; ; round++) {
      try {
        return await inquireAttempt({ ...context, timeoutMs: input.settings.processorTimeoutMs });
      } catch (error) {
        // Asking again cannot help an answer the database refuses for good: the payment ends failed, voiding it.
        if (!isActivityFailure(error) || (unrecordedAttemptOf(error) && patched(ATTEMPT_NOT_RECORDED_ENDS)) || !patched(INQUIRE_UNTIL_KNOWN)) throw error;
        const reference = { submitOrderId: input.submitOrderId, attemptNumber: context.attemptNumber, reason: reasonOf(error) };
        const giveUpAfterSeconds = (patched(INQUIRY_GIVE_UP_SETTING) ? input.settings.unknownOutcomeGiveUpSeconds : undefined) ?? INQUIRIES_GIVE_UP_AFTER_SECONDS;
        if (Date.now() - since >= giveUpAfterSeconds * 1000) {
          log.error('Authorization outcome still unknown after the inquiries allowed; the payment ends failed for an operator to check', reference);
          chargeUncertain = true;
          throw error;
        }
        const waitSeconds = Math.min(FIRST_INQUIRY_WAIT_SECONDS * 2 ** round, LONGEST_INQUIRY_WAIT_SECONDS);
        log.warn('Authorization outcome unknown and the processor cannot tell yet; asking again later', { ...reference, retryInSeconds: waitSeconds });
        await sleep(waitSeconds * 1000);
      }
    }
  }

  /** Records the challenge and answers the caller Pending (or RedirectRequired) with its `threeDSecureId`. */
  async function openChallenge(account: MerchantCandidate, attemptNumber: number, outcome: Extract<AttemptOutcome, { kind: 'challenge' }>): Promise<Challenge> {
    // Unguessable: it is the only key of the challenge redirect and of the completion call.
    const threeDSecureId = `3ds_${uuid4().replaceAll('-', '')}`;
    // The completion must carry a session of this payment, but /3ds takes a partnerSession of 50 characters
    // at most, and a longer one is not kept: such a payment gets a serviceSession issued to complete with.
    const serviceSession = input.order.serviceSession || persistedPartnerSession(input.order.partnerSession) ? undefined : `svc_${uuid4().replaceAll('-', '')}`;
    if (serviceSession) payment = { submitOrderId: input.submitOrderId, resultContext: { ...input.resultContext, serviceSession } };
    const opened: Challenge = { threeDSecureId, account, attemptNumber, processorTransactionId: outcome.processorTransactionId, expiring: false };
    challenge = opened;
    await settlePaymentOrder({
      tenantId: input.tenantId,
      productId: input.productId,
      submitOrderId: input.submitOrderId,
      email: input.email,
      state: 'pending_3ds',
      threeDSecureId,
      challengeUrl: outcome.challengeUrl,
      serviceSession,
    });
    giveAnswer(pendingResult(payment, account, attempts, threeDSecureId));
    upsertSearchAttributes([{ key: OutcomeAttribute, value: 'Pending' }]);
    return opened;
  }

  /**
   * `complete3ds`: asks the processor to finish the challenge, without waiting for the cardholder. Before they
   * answered the challenge, a refusal that changes nothing; after, the final result, the same every time.
   */
  async function completeChallenge(waiting: Challenge): Promise<SubmitResult> {
    if (!waiting.completed && !finalResult) {
      if (!waiting.asking) {
        if (waiting.expiring) throw waitOver(waiting);
        waiting.asking = askProcessor(waiting).finally(() => (waiting.asking = undefined));
      }
      if (!(await waiting.asking)) throw refusal('challenge_pending', 'The cardholder has not completed the 3-D Secure challenge yet');
    }
    await condition(() => finalResult !== undefined);
    return finalResult!;
  }

  /** One completion at the processor; false while the cardholder has not finished the challenge. */
  async function askProcessor(waiting: Challenge): Promise<boolean> {
    try {
      return await askProcessorOnce(waiting);
    } finally {
      waiting.lastAskedAt = Date.now();
    }
  }

  async function askProcessorOnce(waiting: Challenge): Promise<boolean> {
    try {
      const completion = await completeThreeDSecure({
        // The challenged attempt's own reference: its transaction is completed, not a new one recorded.
        ...attemptContext(waiting.account, waiting.attemptNumber),
        processorTransactionId: waiting.processorTransactionId,
        // cancelOnFail false: if authentication fails, charge anyway, without liability shift.
        proceedWithoutAuthentication: !input.threeDSecure.cancelOnFail,
        timeoutMs: input.settings.processorTimeoutMs,
      });
      if (!completion.finished) return false;
      attempts.push(completion.attempt);
      waiting.completed = completion.attempt;
      return true;
    } catch (error) {
      if (!isActivityFailure(error)) throw error;
      if (failedForGood(error)) {
        waiting.failure = error;
        return true;
      }
      throw refusal('processor_unavailable', 'The processor did not answer the 3-D Secure completion; send it again');
    }
  }

  /**
   * Nobody completed the challenge in time (`expired`, 3DS Failed), or the payment was voided while it waited
   * (`voided`, Authorized then Voided/Cancelled): void anything authorized, end the payment, tell the tenant.
   */
  async function endOpenChallenge(waiting: Challenge, end: 'expired' | 'voided'): Promise<SubmitResult> {
    const voided = await voidAuthorization({ gateway: waiting.account.gateway, processorTransactionId: waiting.processorTransactionId, timeoutMs: input.settings.processorTimeoutMs });
    // Refused or unanswered: a completion whose answer was lost may have charged the card.
    if (!voided) chargeUncertain = true;
    const settlement = await settlePaymentOrder({ tenantId: input.tenantId, productId: input.productId, submitOrderId: input.submitOrderId, email: input.email, state: end });
    waiting.ended = end;
    const overrideStatusId = end === 'voided' ? StatusId.VOIDED : StatusId.THREE_DS_FAILED;
    return endProcessed(buildProcessedResult(payment, waiting.account, attempts, settlement, { salvage: false, overrideStatusId }), { outcome: end === 'voided' ? 'Voided' : 'Expired' });
  }

  /** A step of the failure path: its own failure is logged (undefined), and the payment still ends. */
  async function bestEffort<T>(step: string, run: () => Promise<T>): Promise<T | undefined> {
    try {
      return await run();
    } catch (error) {
      if (!isActivityFailure(error)) throw error;
      log.error(`Payment failure path: ${step} failed`, { reason: reasonOf(error) });
      return undefined;
    }
  }

  function attemptContext(candidate: MerchantCandidate, attemptNumber: number) {
    return { ...attemptOf(), attemptNumber, candidate };
  }

  /** An authorization of this payment's card, on an account and attempt number still to be named. */
  function authorizationRequest() {
    return {
      ...attemptOf(),
      sealedCard: input.sealedCard,
      threeDSecure: input.threeDSecure.enabled,
      timeoutMs: input.settings.processorTimeoutMs,
      ...(input.capture === false ? { capture: false } : {}),
    };
  }

  /** What every attempt of this payment carries. */
  function attemptOf() {
    return {
      tenantId: input.tenantId,
      productId: input.productId,
      submitOrderId: input.submitOrderId,
      amount: input.amount,
      currency: input.currency,
      email: input.email,
      card: input.card,
      partnerSession: input.order.partnerSession,
      firstName: input.order.firstName,
      lastName: input.order.lastName,
    };
  }

  /**
   * After the answer: the transaction webhook and, for a charge of a checkout session, its paid lead with
   * `customer_lead.paid`, each one durable delivery per endpoint that outlives this workflow. The outcome is
   * settled by then: what cannot be recorded is logged, and never undoes the payment.
   */
  async function tellTheTenant(result: SubmitResult): Promise<void> {
    if (!patched(FEWER_STEPS_BEFORE_THE_ANSWER)) {
      await notify(result);
      await markPaidLead(result);
      return;
    }
    const deliveries = await recordPaymentOutcome(paymentOutcomeOf(result, outcomeContext, new Date().toISOString())).catch((error: unknown) => {
      if (!isActivityFailure(error)) throw error;
      log.error('Transaction webhook or paid lead not recorded', { reason: reasonOf(error) });
      return [];
    });
    await startDeliveries(deliveries);
  }

  /** The transaction webhook alone, as a local activity: how payments started by an older worker replay it. */
  async function notify(result: SubmitResult): Promise<void> {
    const deliveries = await recordTransactionEvent({ tenantId: input.tenantId, occurredAt: new Date().toISOString(), data: transactionEventOf(result, outcomeContext) }).catch(
      (error: unknown) => {
        if (!isActivityFailure(error)) throw error;
        log.error('Transaction webhook not recorded', { reason: reasonOf(error) });
        return [];
      },
    );
    await startDeliveries(deliveries);
  }

  /** The paid lead alone, as a local activity: a captured authorization (its webhook went with the change). */
  async function markPaidLead(result: SubmitResult): Promise<void> {
    const paidLead = paidLeadOf(result, outcomeContext, new Date().toISOString());
    if (!paidLead) return;
    const deliveries = await markLeadPaid(paidLead).catch((error: unknown) => {
      if (!isActivityFailure(error)) throw error;
      log.error('Lead not marked paid', { reason: reasonOf(error) });
      return [];
    });
    await startDeliveries(deliveries);
  }

  /** One durable delivery workflow per recorded delivery; they outlive this workflow. */
  async function startDeliveries(deliveries: Deliveries): Promise<void> {
    await startWebhookDeliveries(deliveries, { schedule: input.settings.webhookSchedule, attemptTimeoutMs: input.settings.webhookTimeoutMs });
  }
}
