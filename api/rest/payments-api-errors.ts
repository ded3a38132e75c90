import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { DomainError, type ErrorCode } from '../../domain/errors.ts';
import { PaymentApiError, type PaymentApiErrorType } from '../../domain/payments-api/errors.ts';
import { PaymentStillProcessingError } from '../../domain/payments/payment-runner.ts';
import { describeSchemaErrors } from '../../domain/validation/json-schema.ts';
import type { UnknownRouteShape } from '../http/method-not-allowed.ts';
import { unsupportedMediaMessage } from '../http/content-encoding.ts';
import { isReservedKeyRefusal, RESERVED_KEY_FIELD, RESERVED_KEY_PROBLEM } from '../http/reserved-keys.ts';
import { DuplicateKeyError } from '../http/duplicate-keys.ts';
import { InexactNumberError } from '../http/whole-numbers.ts';
import { BodyTooDeepError } from '../http/json-bodies.ts';
import { outageAsUnavailable } from '../http/outages.ts';

/** The one error body of the generic `/payments` API (Stripe's shape). */
export const PaymentApiErrorResponse = Type.Object(
  {
    error: Type.Object({
      type: Type.Union(['invalid_request_error', 'card_error', 'idempotency_error', 'authentication_error', 'rate_limit_error', 'api_error'].map((t) => Type.Literal(t)), {
        description: 'What kind of failure: the request (`invalid_request_error`), the card (`card_error`), a reused key (`idempotency_error`), the key (`authentication_error`), the rate limit, or the gateway (`api_error`)',
      }),
      code: Type.String({
        description:
          'Machine-readable reason, e.g. `parameter_invalid`, `resource_missing`, `invalid_number`, `credit_exceeds_original_amount`; a 503 is `still_processing` when the request may still take effect (retry with the same Idempotency-Key, or read the payment) and `service_unavailable` when nothing of it was taken (send it again)',
      }),
      message: Type.String({ description: 'For people; names the parameter at fault' }),
      param: Type.Optional(Type.String({ description: 'The parameter at fault, dotted for nested ones (`card.number`)' })),
      status_id: Type.Optional(Type.Integer({ description: 'Transaction status code (spec 7.5) when the refusal has one: 0 before processing, 4313 for a refund over the captured amount' })),
      payment_id: Type.Optional(
        Type.String({ description: 'The payment the request started, when it did not answer in time (503 `still_processing`): it goes on, and `GET /payments/{payment_id}` gives its outcome' }),
      ),
    }),
  },
  {
    $id: 'PaymentApiError',
    description: 'The request was refused; nothing was charged, refunded or changed',
    examples: [{ error: { type: 'invalid_request_error', code: 'credit_exceeds_original_amount', message: 'Credit Exceeds Original Amount: at most 500 can still be refunded', param: 'amount', status_id: 4313 } }],
  },
);

const STATUS_OF_TYPE = {
  invalid_request_error: 400,
  card_error: 402,
  idempotency_error: 409,
  authentication_error: 401,
  rate_limit_error: 429,
  api_error: 500,
} as const satisfies Record<PaymentApiErrorType, number>;

/** Codes whose status differs from their type's. */
const STATUS_OF_CODE: Record<string, number> = { resource_missing: 404, credit_exceeds_original_amount: 402, payment_not_refundable: 400 };

/** Domain failures (authentication, rate limit, validation at the edge...) in this API's terms; exhaustive. */
const FROM_DOMAIN = {
  validation: { type: 'invalid_request_error', code: 'parameter_invalid', status: 400 },
  unauthenticated: { type: 'authentication_error', code: 'invalid_api_key', status: 401 },
  forbidden: { type: 'authentication_error', code: 'forbidden', status: 403 },
  not_found: { type: 'invalid_request_error', code: 'resource_missing', status: 404 },
  conflict: { type: 'idempotency_error', code: 'idempotency_key_in_use', status: 409 },
  gone: { type: 'invalid_request_error', code: 'resource_gone', status: 410 },
  payload_too_large: { type: 'invalid_request_error', code: 'body_too_large', status: 413 },
  rate_limited: { type: 'rate_limit_error', code: 'rate_limited', status: 429 },
  unavailable: { type: 'api_error', code: 'still_processing', status: 503 }, // or `service_unavailable`: unavailableCode
} as const satisfies Record<ErrorCode, { type: PaymentApiErrorType; code: string; status: number }>;

interface Mapped {
  readonly status: number;
  readonly body: { error: { type: PaymentApiErrorType; code: string; message: string; param?: string; status_id?: number; payment_id?: string } };
  readonly retryAfterSeconds?: number;
  readonly unexpected?: boolean;
}

const invalid = (code: string, message: string, param?: string, status = 400): Mapped => ({
  status,
  body: { error: { type: 'invalid_request_error', code, message, ...(param ? { param } : {}) } },
});

/**
 * A 503's code says whether its request may still take effect: `still_processing` (a payment or action under way, or
 * Temporal or PostgreSQL away while a change was asked: get the outcome with the same Idempotency-Key or by reading
 * it), or `service_unavailable` when the refusal took nothing (`nothingTaken`: the gateway busy or stopping, a refund
 * not started, a read that met an outage, as `outageAsUnavailable` marks it; sending it again is safe). A read of a
 * payment started and not recorded yet (`PaymentNotRecordedYetError`) is `still_processing`: that payment goes on.
 */
function unavailableCode(error: DomainError): 'still_processing' | 'service_unavailable' {
  return error.details.nothingTaken ? 'service_unavailable' : 'still_processing';
}

export function toPaymentApiError(error: unknown): Mapped {
  if (error instanceof PaymentApiError) {
    const { param, statusId } = error.extra;
    return {
      status: STATUS_OF_CODE[error.code] ?? STATUS_OF_TYPE[error.type],
      body: { error: { type: error.type, code: error.code, message: error.message, ...(param ? { param } : {}), ...(statusId !== undefined ? { status_id: statusId } : {}) } },
    };
  }
  if (error instanceof DomainError) {
    const mapped = FROM_DOMAIN[error.code];
    const param = error.details.field;
    // A conflicting Idempotency-Key is a reuse with another request unless the first is still running.
    const code =
      error.code === 'conflict' && /different request/.test(error.message)
        ? 'idempotency_key_reused'
        : error.code === 'unavailable'
          ? unavailableCode(error)
          : mapped.code;
    return {
      status: mapped.status,
      body: { error: { type: mapped.type, code, message: error.message, ...(param ? { param } : {}), ...(error instanceof PaymentStillProcessingError ? { payment_id: error.paymentId } : {}) } },
      retryAfterSeconds: error.details.retryAfterSeconds,
    };
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation && fastifyError.validation.length > 0) {
    const root = fastifyError.validationContext ?? 'body';
    const first = fastifyError.validation[0] as { instancePath?: string; params?: { missingProperty?: string; additionalProperty?: string } };
    const path = [...(first.instancePath ?? '').split('/').filter(Boolean), first.params?.missingProperty ?? first.params?.additionalProperty].filter(Boolean).join('.');
    return invalid('parameter_invalid', describeSchemaErrors(fastifyError.validation as never, root === 'querystring' ? 'query' : root), path || undefined);
  }
  if (isReservedKeyRefusal(error)) return invalid('parameter_invalid', `${RESERVED_KEY_FIELD}: ${RESERVED_KEY_PROBLEM}`, RESERVED_KEY_FIELD);
  if (error instanceof InexactNumberError) return invalid('parameter_invalid', error.message, error.path);
  if (error instanceof BodyTooDeepError) return invalid('parameter_invalid', error.message);
  if (error instanceof DuplicateKeyError) return invalid('parameter_invalid', error.message, error.path);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('invalid_json', 'The body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return invalid('body_too_large', 'Request body too large', undefined, 413);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalid('unsupported_media_type', unsupportedMediaMessage(error, 'Content-Type must be application/json'), undefined, 415);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalid('invalid_content_length', 'Invalid Content-Length');
  }
  if (error instanceof SyntaxError) return invalid('invalid_json', 'The body is not valid JSON');
  return { status: 500, body: { error: { type: 'api_error', code: 'internal_error', message: 'Internal server error' } }, unexpected: true };
}

export function sendPaymentApiError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const mapped = toPaymentApiError(outageAsUnavailable(error, request.log, request.method));
  if (mapped.unexpected) request.log.error({ err: error }, 'unexpected error');
  if (mapped.retryAfterSeconds !== undefined) reply.header('retry-after', String(mapped.retryAfterSeconds));
  return reply.status(mapped.status).send(mapped.body);
}

/** A path of this API asked with a method it does not serve (405), or no path of it at all (404), in its own shape. */
export const paymentApiUnknownRoute: UnknownRouteShape = {
  prefixes: ['/payments', '/subscriptions'],
  body: (status, message) =>
    status === 500
      ? { error: { type: 'api_error', code: 'internal_error', message } }
      : { error: { type: 'invalid_request_error', code: status === 405 ? 'method_not_allowed' : status === 400 ? 'url_invalid' : 'resource_missing', message } },
};
