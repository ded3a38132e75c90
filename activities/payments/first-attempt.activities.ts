import { ApplicationFailure } from '@temporalio/common';
import type { AttemptResult } from '../../domain/payments/attempts.ts';
import { closingOf, firstAnswerEndsPayment, type PaymentTerms } from '../../domain/payments/closing.ts';
import type { SubscriptionPlan } from '../../domain/catalog/product.ts';
import { buildProcessedResult, type Settlement } from '../../domain/payments/processed-result.ts';
import { paymentOutcomeOf } from '../../domain/payments/payment-outcome.ts';
import type { ResultContext } from '../../domain/payments/submit-result.ts';
import type { RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import { createAuthorizationActivities, type AuthorizationActivityDeps, type AuthorizationRequest } from './authorization.activities.ts';
import { createPaymentOutcomeRecorder } from './payment-outcome.activities.ts';
import { runGivenUp } from '../shared/run-given-up.ts';
import {
  createPaymentOrderActivities,
  type MerchantAccountChoice,
  type OpenPaymentOrderInput,
  type ReserveMerchantAccountInput,
} from './payment-order.activities.ts';

export interface FirstAttemptInput extends OpenPaymentOrderInput {
  readonly firstAccount: ReserveMerchantAccountInput;
  /** The authorization on the first account, less the account and attempt number this step chooses. */
  readonly authorization: Omit<AuthorizationRequest, 'candidate' | 'attemptNumber'>;
  readonly terms: PaymentTerms;
  readonly plan: SubscriptionPlan | null;
  /**
   * Given, a payment this step ends also has its outcome recorded here (the transaction webhook's deliveries, the
   * paid lead), in the result the workflow answers with: no step after the answer. Absent (a workflow started by an
   * older worker), the workflow records it after the answer itself.
   */
  readonly tellTheTenant?: { readonly resultContext: ResultContext; /** A rebill's subscription. */ readonly rebillOf?: number };
}

/**
 * The first step of a payment: already subscribed (nothing reserved), or the first account's choice with, when it was
 * sent, the attempt's answer, and the order's settlement when that answer ended the payment.
 */
export type FirstAttempt =
  | { readonly alreadySubscribed: true }
  | {
      readonly alreadySubscribed: false;
      readonly firstAccount: MerchantAccountChoice;
      readonly attempt?: AttemptResult;
      readonly settlement?: Settlement;
      /** The settled payment's outcome was recorded: the deliveries to start. Absent: the workflow records it. */
      readonly told?: RecordedDelivery[];
    };

/**
 * The common payment as one local activity: open the order, reserve the first account, authorize on it and, when
 * the answer ends the payment, settle the order and record what the tenant is told of it. The workflow then answers
 * after one step instead of three and has nothing left to do after its answer (each step costs it an activation).
 * Every part is the step the workflow would otherwise run and is idempotent: run again after a crash, the order and
 * reservation are found, a recorded answer is returned without calling the processor, an unrecorded one is sent
 * again under the same reference, which the processor deduplicates, and the outcome's deliveries keep their ids.
 */
export function createFirstAttemptActivities(deps: AuthorizationActivityDeps) {
  const { openOrderAndReserveAccount, settlePaymentOrder } = createPaymentOrderActivities(deps);
  const { authorizeAttempt } = createAuthorizationActivities(deps);
  const recordPaymentOutcome = createPaymentOutcomeRecorder(deps);

  async function tryFirstAttempt(input: FirstAttemptInput): Promise<FirstAttempt> {
    const { authorization, terms, plan, tellTheTenant, ...order } = input;
    const { orderIsNew, ...opened } = await openOrderAndReserveAccount(order);
    if (opened.alreadySubscribed) return opened;
    const choice = opened.firstAccount;
    // No account, or a forced one refusing the payment unsent: the workflow goes on with those (rare) paths itself.
    if (!choice.account || choice.refusal !== undefined) return opened;
    const account = choice.account;
    try {
      const attempt = await authorizeAttempt({ ...authorization, candidate: account, attemptNumber: 1 }, orderIsNew);
      // A run Temporal gave up (it outlived its time limit) settles and tells nothing: the payment went on step by step
      // without it and may end otherwise (voided, failed), and the tenant must be told that end, not this run's.
      if (runGivenUp() || !firstAnswerEndsPayment(terms, account, attempt.outcome)) return { ...opened, attempt };
      const { state, subscription, salvage } = closingOf(attempt.outcome, plan);
      const settlement = await settlePaymentOrder({
        tenantId: order.tenantId,
        productId: order.productId,
        submitOrderId: order.submitOrderId,
        email: order.email,
        state,
        ...(subscription ? { subscription } : {}),
      });
      if (!tellTheTenant || runGivenUp()) return { ...opened, attempt, settlement };
      // What the tenant is told is the answer the workflow gives: the same pure function over the same facts.
      const result = buildProcessedResult({ submitOrderId: order.submitOrderId, resultContext: tellTheTenant.resultContext }, account, [attempt], settlement, { salvage });
      const context = { ...order, partnerSession: order.order.partnerSession, ...(tellTheTenant.rebillOf ? { subscriptionId: tellTheTenant.rebillOf } : {}) };
      const outcome = paymentOutcomeOf(result, context, new Date().toISOString());
      const told = await recordPaymentOutcome(outcome, { waitForLock: false }).catch((error: unknown) => {
        // Settled all the same: the workflow records the outcome after its answer, with retries.
        // The SQLSTATE only: the driver's message can quote the statement's values (a session id, the webhook's body).
        deps.logger.warn({ submitOrderId: order.submitOrderId, sqlState: (error as { code?: unknown } | null)?.code, error: error instanceof Error ? error.name : typeof error }, 'payment outcome left to the workflow');
        return undefined;
      });
      return { ...opened, attempt, settlement, ...(told ? { told } : {}) };
    } catch (error) {
      // The authorization may have been sent: whatever failed, the payment must go on step by step (asking the
      // processor before anything else), not end here. A failure opening the order ends it, nothing sent.
      throw error instanceof ApplicationFailure && error.nonRetryable ? ApplicationFailure.retryable(error.message, error.type, ...(error.details ?? [])) : error;
    }
  }

  // Each part already reports a failure no retry fixes as non-retryable.
  return { tryFirstAttempt };
}
