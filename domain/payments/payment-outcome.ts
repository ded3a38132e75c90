import { paymentId } from '../payments-api/ids.ts';
import { persistedPartnerSession } from './payment-input.ts';
import type { SubmitResult } from './submit-result.ts';

/**
 * The transaction webhook's `data` for a payment: the submit result without card-derived details beyond BIN and
 * last 4, `kind: 'payment'` (a refund's `transaction.completed` is `kind: 'refund'`, its amounts the same JSON numbers).
 */
export type TransactionEventData = Pick<
  SubmitResult,
  'info' | 'statusId' | 'error' | 'chargeSuccess' | 'subscribeSuccess' | 'declineSalvage' | 'amount' | 'transactionId' | 'orderId' | 'submitOrderId' | 'subscriptionId' | 'mid' | 'email' | 'partnerSession' | 'serviceSession' | 'bin' | 'last4'
> & {
  kind: 'payment';
  currency: string;
  productId: number;
  /** The payment's id in the generic API (`pay_<submitOrderId>`), which a refund's event carries too: the join key. */
  paymentId: string;
};

/** A successful charge of a checkout session, to mark the session's lead paid (spec 3.2). */
export interface PaidLead {
  readonly tenantId: number;
  readonly productId: number;
  readonly merchantAccountId: number;
  /** The checkout's `partnerSession` (the lead's `session_id`). */
  readonly sessionId: string;
  readonly transactionId: string;
  readonly orderId: number;
  /** Exact decimal string. */
  readonly amount: string;
  readonly currency: string;
  /** 0 when the payment started no subscription. */
  readonly subscriptionId: number;
  /** ISO 8601. */
  readonly paidAt: string;
}

/** What a payment's outcome tells its tenant: the `transaction.completed` webhook and, for a charge of a checkout session, the paid lead. */
export interface PaymentOutcome {
  readonly tenantId: number;
  /** ISO 8601. */
  readonly occurredAt: string;
  readonly transaction: TransactionEventData;
  readonly paidLead?: PaidLead;
}

/** The payment a result belongs to, as far as its outcome needs. */
export interface OutcomeContext {
  readonly tenantId: number;
  readonly productId: number;
  readonly amount: string;
  readonly currency: string;
  readonly partnerSession?: string;
  /** A rebill's subscription: its result names none (the payment created none), its event does. */
  readonly subscriptionId?: number;
}

/** The outcome of a payment that ended with `result`, at `at` (ISO 8601): one definition for the workflow and its first step. */
export function paymentOutcomeOf(result: SubmitResult, payment: OutcomeContext, at: string): PaymentOutcome {
  const paidLead = paidLeadOf(result, payment, at);
  return { tenantId: payment.tenantId, occurredAt: at, transaction: transactionEventOf(result, payment), ...(paidLead ? { paidLead } : {}) };
}

/** The `transaction.completed` data: the result, with no card detail beyond BIN and last 4. */
export function transactionEventOf(result: SubmitResult, payment: OutcomeContext): TransactionEventData {
  return {
    kind: 'payment',
    info: result.info,
    statusId: result.statusId,
    error: result.error,
    chargeSuccess: result.chargeSuccess,
    subscribeSuccess: result.subscribeSuccess,
    declineSalvage: result.declineSalvage,
    amount: result.amount,
    currency: payment.currency,
    productId: payment.productId,
    transactionId: result.transactionId,
    orderId: result.orderId,
    submitOrderId: result.submitOrderId,
    paymentId: paymentId(result.submitOrderId),
    subscriptionId: payment.subscriptionId ?? result.subscriptionId,
    mid: result.mid,
    email: result.email,
    partnerSession: persistedPartnerSession(payment.partnerSession) ?? '',
    serviceSession: result.serviceSession,
    bin: result.bin,
    last4: result.last4,
  };
}

/** A successful charge makes the lead of its checkout session paid (spec 3.2); nothing else does. */
export function paidLeadOf(result: SubmitResult, payment: OutcomeContext, paidAt: string): PaidLead | undefined {
  const sessionId = persistedPartnerSession(payment.partnerSession);
  if (!result.chargeSuccess || !sessionId) return undefined;
  return {
    tenantId: payment.tenantId,
    productId: payment.productId,
    merchantAccountId: result.merchantAccountId,
    sessionId,
    transactionId: result.transactionId,
    orderId: result.orderId,
    amount: payment.amount,
    currency: payment.currency,
    // A salvaged checkout's retry (a rebill of period 0) created no subscription: the lead names the one it pays for.
    subscriptionId: payment.subscriptionId ?? result.subscriptionId,
    paidAt,
  };
}
