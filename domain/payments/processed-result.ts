import { statusById } from '../statuses/status-codes.ts';
import { emptyResult, type ResultContext, type SubmitResult } from './submit-result.ts';
import { StatusId } from '../statuses/status-ids.ts';

/** The subset of an attempt the result needs (kept structural so workflow code can use it). */
export interface AttemptView {
  readonly outcome:
    | { kind: 'approved'; statusId: number; processorTransactionId: string; authCode: string; eci?: string }
    | { kind: 'declined'; statusId: number; processorTransactionId?: string }
    | { kind: 'challenge'; processorTransactionId: string; challengeUrl: string; redirect?: boolean }
    | { kind: 'unknown'; reason: string }
    | { kind: 'not_found' };
  readonly exchange: { gateway: string; httpStatus: number; response: string };
}

export interface AccountView {
  readonly merchantAccountId: number;
  readonly mid: string;
  readonly descriptor: string;
  readonly midPortalUrl: string;
}

export interface Settlement {
  readonly orderId: number;
  readonly subscriptionId: number;
}

export interface PaymentView {
  readonly submitOrderId: number;
  readonly resultContext: ResultContext;
}

function base(payment: PaymentView, account: AccountView, attempts: readonly AttemptView[]): SubmitResult {
  return {
    ...emptyResult(payment.resultContext),
    submitOrderId: payment.submitOrderId,
    orderId: payment.submitOrderId,
    mid: account.mid,
    merchantAccountId: account.merchantAccountId,
    descriptor: account.descriptor,
    midPortalUrl: account.midPortalUrl,
    gatewayResponses: attempts.map((a) => ({ ...a.exchange })),
  };
}

/** A processed outcome (spec 3.1): Success when charged or subscribed, Error with the status otherwise. */
export function buildProcessedResult(
  payment: PaymentView,
  account: AccountView,
  attempts: readonly AttemptView[],
  settlement: Settlement,
  options: { salvage: boolean; overrideStatusId?: number },
): SubmitResult {
  const last = attempts[attempts.length - 1]!.outcome;
  const approved = last.kind === 'approved' && options.overrideStatusId === undefined;
  const statusId = options.overrideStatusId ?? (last.kind === 'approved' || last.kind === 'declined' ? last.statusId : StatusId.SYSTEM_TIMEOUT);
  const description = statusById(statusId)?.status ?? 'Unknown status';
  const subscribed = settlement.subscriptionId > 0;
  return {
    ...base(payment, account, attempts),
    orderId: settlement.orderId,
    subscriptionId: settlement.subscriptionId,
    info: approved || (subscribed && options.salvage) ? 'Success' : 'Error',
    error: approved ? '' : description,
    message: approved ? description : description,
    chargeSuccess: approved,
    subscribeSuccess: subscribed,
    declineSalvage: !approved && subscribed && options.salvage,
    statusId,
    transactionId: 'processorTransactionId' in last ? (last.processorTransactionId ?? '') : '',
    eci: last.kind === 'approved' ? (last.eci ?? '') : '',
  };
}

/**
 * The cardholder must act first. 3-D Secure: `Pending`, a `threeDSecureId`, empty message (spec 2.3).
 * A processor redirect: `RedirectRequired` with the URL in `message`; completion is the same `/3ds` call.
 */
export function pendingResult(payment: PaymentView, account: AccountView, attempts: readonly AttemptView[], threeDSecureId: string): SubmitResult {
  const last = attempts[attempts.length - 1]!.outcome;
  const redirectUrl = last.kind === 'challenge' && last.redirect ? last.challengeUrl : undefined;
  return {
    ...base(payment, account, attempts),
    info: redirectUrl ? 'RedirectRequired' : 'Pending',
    message: redirectUrl ?? '',
    threeDSecureId,
    statusId: StatusId.SUBMITTED,
    transactionId: 'processorTransactionId' in last ? (last.processorTransactionId ?? '') : '',
  };
}

/** No merchant account can take the payment: nothing was sent to a processor. */
export function noMerchantAccountResult(payment: PaymentView): SubmitResult {
  const error = 'No merchant account available for this payment';
  return { ...emptyResult(payment.resultContext), submitOrderId: payment.submitOrderId, orderId: payment.submitOrderId, info: 'None', error, message: error };
}

/** No live merchant account of the tenant takes the card's network (spec 7.1): nothing was sent to a processor. */
export function networkNotSupportedResult(payment: PaymentView, network: string): SubmitResult {
  const error = `${network} cards not supported`;
  return { ...emptyResult(payment.resultContext), submitOrderId: payment.submitOrderId, orderId: payment.submitOrderId, info: 'Failed', error, message: error };
}

/** The e-mail already holds (or another payment is claiming) a live subscription to the product: nothing was charged. */
export function alreadySubscribedResult(payment: PaymentView): SubmitResult {
  const error = 'Already subscribed';
  return { ...emptyResult(payment.resultContext), submitOrderId: payment.submitOrderId, orderId: payment.submitOrderId, info: 'AlreadySubscribed', error, message: error };
}

/**
 * A step of the payment failed for good before its outcome was settled (text the database refuses, an outage
 * outlasting the retries): nothing is charged (an authorization is voided), so no transaction outcome is
 * reported: `Error` with `statusId` 0, the "unexpected error" of spec 2.3.
 */
export function unprocessableResult(payment: PaymentView, attempts: readonly AttemptView[]): SubmitResult {
  const error = 'The payment could not be processed';
  return {
    ...emptyResult(payment.resultContext),
    submitOrderId: payment.submitOrderId,
    orderId: payment.submitOrderId,
    info: 'Error',
    error,
    message: error,
    gatewayResponses: attempts.map((a) => ({ ...a.exchange })),
  };
}
