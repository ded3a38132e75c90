import { ActivityFailure, ApplicationFailure, ParentClosePolicy, condition, proxyActivities, proxyLocalActivities, setHandler, startChild, upsertSearchAttributes, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import type { AttemptOutcome, AttemptResult, MerchantCandidate } from '../../domain/payments/attempts.ts';
import { mayCascade } from '../../domain/payments/cascade-policy.ts';
import { alreadySubscribedResult, buildProcessedResult, noMerchantAccountResult, pendingResult, type Settlement } from '../../domain/payments/processed-result.ts';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';
import { statusById } from '../../domain/statuses/status-codes.ts';
import { OutcomeAttribute } from '../contract/search-attributes.ts';
import { workflowIds } from '../contract/workflow-ids.ts';
import { webhookDeliveryWorkflow } from '../webhooks/webhook-delivery.workflow.ts';
import type { PaymentWorkflowInput } from '../../domain/payments/payment-input.ts';
import { completeThreeDSecureUpdate, submitUpdate } from '../contract/payment-updates.ts';

/**
 * Short database steps run as local activities: in the worker, inside the workflow task, so a submit
 * answers after fewer Temporal round trips. They are idempotent, so a retry after a crash is safe.
 */
const { openPaymentOrder, reserveMerchantAccount, settlePaymentOrder, recordUnsentAttempt, recordTransactionEvent } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  // No attempt limit: a payment must not fail because the database was briefly away.
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds' },
});

/** Processor calls other than the authorization itself are safe to retry. */
const { inquireAttempt, completeThreeDSecure, voidAuthorization } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** How many times an authorization the processor never saw is sent again (same reference, so never twice). */
const MAX_RESENDS = 2;
/** Time an authorization activity may take beyond the processor timeout (database write, scheduling). */
const AUTHORIZATION_MARGIN_MS = 5_000;
const THREE_DS_FAILED = 4172;

/**
 * A card submit, from the first authorization to the last webhook:
 * open the order (claiming the subscription of a plan), choose a merchant account and reserve the amount on
 * its monthly cap, authorize (asking the processor when an answer is lost), cascade a cascadable decline once
 * to another account, wait for a 3-D Secure challenge when needed, settle the order and subscription, answer
 * the caller, then notify the tenant's endpoints.
 */
export async function paymentWorkflow(input: PaymentWorkflowInput): Promise<SubmitResult> {
  // An authorization is never retried by Temporal: if it times out, the outcome is unknown and the
  // processor is asked (below) before anything else happens. It runs as a local activity (one Temporal
  // round trip less per submit): if the worker dies mid-call, the new worker sends it again under the
  // same reference, which the processor deduplicates, so the card is still charged once.
  const { authorizeAttempt } = proxyLocalActivities<Activities>({
    startToCloseTimeout: input.settings.processorTimeoutMs + AUTHORIZATION_MARGIN_MS,
    retry: { maximumAttempts: 1 },
  });
  let answer: SubmitResult | undefined;
  let finalResult: SubmitResult | undefined;
  let challenge: { threeDSecureId: string; answered: boolean } | undefined;

  setHandler(submitUpdate, async () => {
    await condition(() => answer !== undefined);
    return answer!;
  });
  setHandler(
    completeThreeDSecureUpdate,
    async () => {
      challenge!.answered = true;
      await condition(() => finalResult !== undefined);
      return finalResult!;
    },
    {
      validator: ({ threeDSecureId }) => {
        if (!challenge || challenge.threeDSecureId !== threeDSecureId) throw ApplicationFailure.nonRetryable('Unknown threeDSecureId', 'UnknownThreeDSecure');
        if (challenge.answered || finalResult) throw ApplicationFailure.nonRetryable('This 3-D Secure session was already completed', 'ThreeDSecureCompleted');
      },
    },
  );

  const opened = await openPaymentOrder({
    tenantId: input.tenantId,
    productId: input.productId,
    submitOrderId: input.submitOrderId,
    workflowId: workflowInfo().workflowId,
    email: input.email,
    amount: input.amount,
    currency: input.currency,
    order: input.order,
    subscription: input.subscriptionPlan ? { recurringAmount: input.subscriptionPlan.recurringAmount } : undefined,
  });
  if (opened.alreadySubscribed) return endUnprocessed(alreadySubscribedResult(input), 'AlreadySubscribed');

  const attempts: AttemptResult[] = [];
  const first = await chooseAccount([]);
  if (!first.account) return endUnprocessed(noMerchantAccountResult(input), 'NoMerchantAccount');
  let account = first.account;
  let attemptNumber = 1;
  let attempt = first.refusal === undefined ? await authorize(account, attemptNumber) : await declineUnsent(account, attemptNumber, first.refusal);
  if (input.cascade && attempt.outcome.kind === 'declined' && mayCascade(attempt.outcome.statusId, account)) {
    const second = await chooseAccount([account.merchantAccountId], account.acquiringBank);
    if (second.account && second.refusal === undefined) {
      account = second.account;
      attemptNumber = 2;
      attempt = await authorize(account, attemptNumber);
    }
  }

  if (attempt.outcome.kind === 'challenge') {
    // Unguessable: it is the only key of the challenge redirect and of the completion call.
    const threeDSecureId = `3ds_${uuid4().replaceAll('-', '')}`;
    challenge = { threeDSecureId, answered: false };
    await settlePaymentOrder({
      tenantId: input.tenantId,
      productId: input.productId,
      submitOrderId: input.submitOrderId,
      email: input.email,
      state: 'pending_3ds',
      threeDSecureId,
      challengeUrl: (attempt.outcome as Extract<AttemptOutcome, { kind: 'challenge' }>).challengeUrl,
    });
    answer = pendingResult(input, account, attempts, threeDSecureId);
    upsertSearchAttributes([{ key: OutcomeAttribute, value: 'Pending' }]);

    const answered = await condition(() => challenge!.answered, input.settings.threeDSecureTimeoutSeconds * 1000);
    if (!answered) return expireChallenge(account, attempt);
    attempt = await finishChallenge(account, attemptNumber, attempt);
  }

  const outcome = attempt.outcome;
  const approved = outcome.kind === 'approved';
  const statusId = outcome.kind === 'approved' || outcome.kind === 'declined' ? outcome.statusId : 4285;
  const plan = input.subscriptionPlan;
  const salvage = !approved && plan !== null && plan.gracePeriodDays > 0 && statusById(statusId)?.group === 'insufficientFunds';
  const settlement: Settlement = await settlePaymentOrder({
    tenantId: input.tenantId,
    productId: input.productId,
    submitOrderId: input.submitOrderId,
    email: input.email,
    state: approved ? 'approved' : 'declined',
    subscription: plan && (approved || salvage) ? { ...plan, state: approved ? 'active' : 'grace' } : undefined,
  });
  finalResult = buildProcessedResult(input, account, attempts, settlement, { salvage });
  answer ??= finalResult;
  upsertSearchAttributes([{ key: OutcomeAttribute, value: finalResult.info }]);

  await notify(finalResult);
  return finalResult;

  /** The account of the next attempt, its amount reserved on the account's monthly cap. */
  function chooseAccount(triedMerchantAccountIds: number[], preferAnotherBankThan?: string) {
    return reserveMerchantAccount({
      tenantId: input.tenantId,
      submitOrderId: input.submitOrderId,
      amount: input.amount,
      currency: input.currency,
      network: input.card.network,
      forcedMerchantAccountId: input.forcedMerchantAccountId,
      triedMerchantAccountIds,
      preferAnotherBankThan,
    });
  }

  /** Nothing was sent to a processor (already subscribed, no eligible account): fail the order and answer. */
  async function endUnprocessed(result: SubmitResult, outcome: string): Promise<SubmitResult> {
    await settlePaymentOrder({ tenantId: input.tenantId, productId: input.productId, submitOrderId: input.submitOrderId, email: input.email, state: 'failed' });
    answer = finalResult = result;
    upsertSearchAttributes([{ key: OutcomeAttribute, value: outcome }]);
    return finalResult;
  }

  /** A forced account that cannot take the payment declines it without calling the processor. */
  async function declineUnsent(candidate: MerchantCandidate, number: number, statusId: number): Promise<AttemptResult> {
    const result = await recordUnsentAttempt({ ...attemptContext(candidate, number), statusId });
    attempts.push(result);
    return result;
  }

  /** One authorization; a lost answer is resolved by inquiry, and an unseen one is resent under the same reference. */
  async function authorize(candidate: MerchantCandidate, attemptNumber: number): Promise<AttemptResult> {
    const context = attemptContext(candidate, attemptNumber);
    const send = async (): Promise<AttemptResult | undefined> => {
      try {
        return await authorizeAttempt({ ...context, sealedCard: input.sealedCard, threeDSecure: input.threeDSecure.enabled, timeoutMs: input.settings.processorTimeoutMs });
      } catch (error) {
        if (error instanceof ActivityFailure) return undefined; // worker lost or timed out: outcome unknown
        throw error;
      }
    };
    let result = await send();
    for (let resend = 0; ; resend++) {
      if (result && result.outcome.kind !== 'unknown') break;
      if (result) attempts.push(result);
      result = await inquireAttempt({ ...context, timeoutMs: input.settings.processorTimeoutMs });
      if (result.outcome.kind !== 'not_found' || resend >= MAX_RESENDS) break;
      attempts.push(result);
      // The processor never saw it: sending again under the same reference cannot charge twice.
      result = await send();
    }
    attempts.push(result);
    return result.outcome.kind === 'not_found' ? { ...result, outcome: { kind: 'declined', statusId: 4285 } } : result;
  }

  async function finishChallenge(candidate: MerchantCandidate, number: number, pending: AttemptResult): Promise<AttemptResult> {
    const processorTransactionId = (pending.outcome as Extract<AttemptOutcome, { kind: 'challenge' }>).processorTransactionId;
    // The challenged attempt's own reference: its transaction is completed, not a new one recorded.
    const context = attemptContext(candidate, number);
    // cancelOnFail false: if authentication fails, charge anyway, without liability shift.
    const result = await completeThreeDSecure({
      ...context,
      processorTransactionId,
      proceedWithoutAuthentication: !input.threeDSecure.cancelOnFail,
      timeoutMs: input.settings.processorTimeoutMs,
    });
    attempts.push(result);
    return result;
  }

  /** Nobody completed the challenge in time: void anything authorized, fail the payment, tell the tenant. */
  async function expireChallenge(candidate: MerchantCandidate, pending: AttemptResult): Promise<SubmitResult> {
    const processorTransactionId = (pending.outcome as Extract<AttemptOutcome, { kind: 'challenge' }>).processorTransactionId;
    await voidAuthorization({ gateway: candidate.gateway, processorTransactionId, timeoutMs: input.settings.processorTimeoutMs });
    const settlement = await settlePaymentOrder({ tenantId: input.tenantId, productId: input.productId, submitOrderId: input.submitOrderId, email: input.email, state: 'expired' });
    finalResult = buildProcessedResult(input, candidate, attempts, settlement, { salvage: false, overrideStatusId: THREE_DS_FAILED });
    upsertSearchAttributes([{ key: OutcomeAttribute, value: 'Expired' }]);
    await notify(finalResult);
    return finalResult;
  }

  function attemptContext(candidate: MerchantCandidate, attemptNumber: number) {
    return {
      tenantId: input.tenantId,
      productId: input.productId,
      submitOrderId: input.submitOrderId,
      attemptNumber,
      candidate,
      amount: input.amount,
      currency: input.currency,
      email: input.email,
      card: input.card,
      partnerSession: input.order.partnerSession,
      firstName: input.order.firstName,
      lastName: input.order.lastName,
    };
  }

  /** The transaction webhook, one durable delivery per endpoint; they outlive this workflow. */
  async function notify(result: SubmitResult): Promise<void> {
    const deliveries = await recordTransactionEvent({
      tenantId: input.tenantId,
      occurredAt: new Date().toISOString(),
      data: {
        info: result.info,
        statusId: result.statusId,
        error: result.error,
        chargeSuccess: result.chargeSuccess,
        subscribeSuccess: result.subscribeSuccess,
        declineSalvage: result.declineSalvage,
        amount: result.amount,
        currency: input.currency,
        productId: input.productId,
        transactionId: result.transactionId,
        orderId: result.orderId,
        submitOrderId: result.submitOrderId,
        subscriptionId: result.subscriptionId,
        mid: result.mid,
        email: result.email,
        partnerSession: input.order.partnerSession && input.order.partnerSession.length <= 50 ? input.order.partnerSession : '',
        serviceSession: result.serviceSession,
        bin: result.bin,
        last4: result.last4,
      },
    });
    for (const delivery of deliveries) {
      await startChild(webhookDeliveryWorkflow, {
        workflowId: workflowIds.webhookDelivery(delivery.deliveryId),
        args: [{ deliveryId: delivery.deliveryId, schedule: input.settings.webhookSchedule, attemptTimeoutMs: input.settings.webhookTimeoutMs }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    }
  }
}
