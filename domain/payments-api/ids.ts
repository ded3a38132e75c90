/**
 * Object ids of the generic API carry their type (Stripe's convention): `pay_<order id>` for a payment (its
 * submit order, whichever route created it) and `re_<32 hex>` for a refund.
 */
const PAYMENT_ID = /^pay_([1-9]\d{0,9})$/;

export const paymentId = (submitOrderId: number) => `pay_${submitOrderId}`;

/** The submit order a payment id names, or undefined when the text is no payment id. */
export function orderIdOf(id: string): number | undefined {
  const match = PAYMENT_ID.exec(id);
  const value = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(value) && value <= 2_147_483_647 ? value : undefined;
}

export const REFUND_ID_PATTERN = /^re_[0-9a-f]{32}$/;
