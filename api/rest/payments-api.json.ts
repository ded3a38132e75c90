import type { PaymentRecord } from '../../data/queries/payments-api.ts';
import type { RefundRecord } from '../../data/queries/refunds.ts';
import { paymentId } from '../../domain/payments-api/ids.ts';
import { toMinorUnits } from '../../domain/payments-api/minor-units.ts';
import type { OrderState, UnprocessedReason } from '../../schema/entities/index.ts';
import type { Payment, Refund } from './payments-api.schemas.ts';

type PaymentStatus = 'processing' | 'requires_action' | 'requires_capture' | 'succeeded' | 'failed' | 'canceled';

/** Each order state as a payment status; exhaustive, so a new state cannot go unmapped. */
export const STATUS_OF_STATE = {
  processing: 'processing',
  pending_3ds: 'requires_action',
  authorized: 'requires_capture',
  approved: 'succeeded',
  declined: 'failed',
  failed: 'failed',
  expired: 'canceled',
  voided: 'canceled',
} as const satisfies Record<OrderState, PaymentStatus>;

export function statesOf(status: PaymentStatus): OrderState[] {
  return (Object.keys(STATUS_OF_STATE) as OrderState[]).filter((state) => STATUS_OF_STATE[state] === status);
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

export function paymentJson(payment: PaymentRecord, publicUrl: string): Payment {
  const status = STATUS_OF_STATE[payment.state];
  const attempt = payment.attempt;
  const charged = status === 'succeeded' && attempt?.success === true;
  const refunded = charged ? toMinorUnits(attempt.refundedAmount, payment.currency) : 0;
  const held = charged ? toMinorUnits(attempt.refundReservedAmount, payment.currency) : 0;
  const amount = toMinorUnits(payment.amount, payment.currency);
  return {
    id: paymentId(payment.orderId),
    object: 'payment',
    created: seconds(payment.createdAt),
    status,
    amount,
    currency: payment.currency,
    amount_refunded: refunded,
    amount_refundable: charged ? amount - refunded - held : 0,
    refunded: charged && amount > 0 && refunded === amount,
    email: payment.email,
    product: payment.productId,
    mid: attempt?.mid ?? null,
    merchant_account: attempt?.merchantAccountId ?? null,
    transaction_id: attempt?.transactionId ?? null,
    status_id: attempt?.statusId ?? null,
    failure_code: status === 'failed' ? (attempt ? String(attempt.statusId) : (payment.unprocessedReason ?? 'no_merchant_account')) : null,
    failure_message: status === 'failed' ? (attempt?.status ?? UNPROCESSED_MESSAGES[payment.unprocessedReason ?? 'no_merchant_account']) : status === 'canceled' ? canceledMessage(payment) : null,
    card: payment.card && { brand: payment.card.brand, bin: payment.card.bin, last4: payment.card.last4, exp_month: payment.card.expiryMonth, exp_year: payment.card.expiryYear },
    next_action:
      status === 'requires_action' && payment.threeDSecureId
        ? { type: 'three_d_secure', three_d_secure_id: payment.threeDSecureId, redirect_url: `${publicUrl}/3ds/${payment.threeDSecureId}` }
        : null,
    metadata: payment.metadata,
  };
}

/** Why a payment failed before any processor was asked (an order closed before this was kept: no merchant account). */
const UNPROCESSED_MESSAGES: Record<UnprocessedReason, string> = {
  already_subscribed: 'The e-mail already has a live subscription to this plan: nothing was charged',
  no_merchant_account: 'No merchant account could take the payment',
  card_network_not_supported: "No merchant account takes the card's network",
};

/** Why a payment is `canceled`: voided, its held authorization expired at the processor, or its 3-D Secure challenge expired. */
function canceledMessage(payment: PaymentRecord): string {
  if (payment.state === 'voided') return payment.attempt?.success === false ? 'Voided while it waited on its 3-D Secure challenge' : 'The authorization was voided before capture';
  return payment.attempt?.success ? 'The authorization expired at the processor before capture' : '3DS Failed: the challenge expired';
}

export function refundJson(refund: RefundRecord): Refund {
  return {
    id: refund.id,
    object: 'refund',
    created: seconds(refund.createdAt),
    payment: paymentId(refund.orderId),
    amount: toMinorUnits(refund.amount, refund.currency),
    currency: refund.currency,
    status: refund.state,
    status_id: refund.statusId,
    failure_message: refund.failureMessage,
    transaction_id: refund.refundTransactionId,
    original_transaction_id: refund.originalTransactionId,
    reason: refund.reason,
  };
}
