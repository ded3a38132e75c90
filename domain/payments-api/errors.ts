/**
 * Failures of the generic `/payments` API, in Stripe's shape: a `type` (what kind of failure), a machine `code`,
 * the `param` at fault when one is, and a message for people. The REST layer maps each type (and a few codes) to an
 * HTTP status in one place (`api/rest/payments-api-errors.ts`).
 */
export const PAYMENT_API_ERROR_TYPES = ['invalid_request_error', 'card_error', 'idempotency_error', 'authentication_error', 'rate_limit_error', 'api_error'] as const;
export type PaymentApiErrorType = (typeof PAYMENT_API_ERROR_TYPES)[number];

export class PaymentApiError extends Error {
  constructor(
    readonly type: PaymentApiErrorType,
    readonly code: string,
    message: string,
    readonly extra: { param?: string; statusId?: number; declineCode?: string } = {},
  ) {
    super(message);
    this.name = 'PaymentApiError';
  }
}

export const resourceMissing = (what: string, id: string, param = 'id') => new PaymentApiError('invalid_request_error', 'resource_missing', `No such ${what}: '${id}'`, { param });

/**
 * A submit answered before processing (spec 7.1: `Failed`, `UserBlocked`, `LimitReached`, statusId 0) as the
 * error of the generic API; the same answer always maps to the same error, so an idempotent replay matches (an
 * expiry's field is judged against the date of the answer: a replay past the turn of a year may name the year).
 */
export function preProcessingError(info: string, error: string, expiryAtFault: 'month' | 'year' = 'month'): PaymentApiError {
  if (info === 'UserBlocked') return new PaymentApiError('card_error', 'card_blocked', error, { statusId: 0 });
  if (info === 'LimitReached') return new PaymentApiError('card_error', 'velocity_limit_exceeded', error, { statusId: 0 });
  const known: Record<string, { code: string; param: string }> = {
    'Invalid CC Number': { code: 'invalid_number', param: 'card.number' },
    'Invalid expiry': { code: 'invalid_expiry', param: `card.exp_${expiryAtFault}` },
    'Invalid CVV': { code: 'invalid_cvc', param: 'card.cvc' },
    'Invalid Email': { code: 'invalid_email', param: 'email' },
  };
  const match = known[error] ?? (/cards not supported$/.test(error) ? { code: 'card_not_supported', param: 'card.number' } : /mid|Mid|MID/.test(error) ? { code: 'invalid_mid', param: 'mid' } : undefined);
  if (match) return new PaymentApiError(match.code === 'invalid_mid' || match.code === 'invalid_email' ? 'invalid_request_error' : 'card_error', match.code, error, { param: match.param, statusId: 0 });
  return new PaymentApiError('invalid_request_error', 'payment_refused', error, { statusId: 0 });
}
