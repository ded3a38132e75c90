import type { UnknownRouteShape } from '../http/method-not-allowed.ts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { DomainError } from '../../domain/errors.ts';
import { EmailRequestError, type EmailFailure } from '../../domain/email/email-errors.ts';
import { unsupportedMediaMessage } from '../http/content-encoding.ts';
import { isReservedKeyRefusal, RESERVED_KEY_FIELD, RESERVED_KEY_PROBLEM } from '../http/reserved-keys.ts';
import { DuplicateKeyError } from '../http/duplicate-keys.ts';
import { outageAsUnavailable } from '../http/outages.ts';

/** The e-mail API's error body (spec 7.2): `error` is one of the spec's strings, `details` says more. */
export const EmailErrorResponse = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.String({ description: '`Validation error`, `Invalid tenant key or tenant not found`, `Domain \'<domain>\' is not authorized for this tenant`, `Too many requests`, `Server error`, or the idempotency conflict' }),
    details: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.String(), { description: 'Validation: one sentence per offending field (`emails[3].to[0]`)' }), Type.String({ description: 'Server error, too many requests: what happened and what to do' })]),
    ),
  },
  {
    $id: 'EmailErrorResponse',
    description: 'The request was refused; nothing was queued or sent',
    examples: [{ success: false, error: 'Validation error', details: { 'emails[2].to[0]': 'is not a valid e-mail address: bob@' } }],
  },
);

/**
 * Statuses of the e-mail errors (DESIGN 4, "e-mail error statuses"), exhaustive over the failure kinds. Transport
 * failures (a body over the limit: 413, not JSON: 415) are mapped below from Fastify's codes.
 */
export const EMAIL_ERROR_STATUS = {
  validation: 400,
  invalid_tenant_key: 401,
  unauthorized_domain: 403,
  idempotency_conflict: 409,
  delivery_not_started: 503,
} as const satisfies Record<EmailFailure['kind'], number>;

interface MappedEmailError {
  readonly status: number;
  readonly body: { success: false; error: string; details?: Record<string, string> | string };
  readonly unexpected: boolean;
  readonly retryAfterSeconds?: number;
}

function fromFailure(failure: EmailFailure): MappedEmailError {
  const status = EMAIL_ERROR_STATUS[failure.kind];
  switch (failure.kind) {
    case 'validation':
      return { status, body: { success: false, error: 'Validation error', details: { ...failure.details } }, unexpected: false };
    case 'invalid_tenant_key':
      return { status, body: { success: false, error: 'Invalid tenant key or tenant not found' }, unexpected: false };
    case 'unauthorized_domain':
      return { status, body: { success: false, error: `Domain '${failure.domain}' is not authorized for this tenant`, details: { [failure.field]: 'sender domain not authorized' } }, unexpected: false };
    case 'idempotency_conflict':
      return { status, body: { success: false, error: failure.message }, unexpected: false };
    case 'delivery_not_started':
      return {
        status,
        body: {
          success: false,
          error: 'Server error',
          details: 'The e-mail is stored but its delivery could not be confirmed as started; retry the same request (with the same idempotencyKey): it is sent once',
        },
        unexpected: false,
        retryAfterSeconds: 1,
      };
  }
}

const invalid = (field: string, message: string): MappedEmailError => fromFailure({ kind: 'validation', details: { [field]: message } });

/** Anything thrown while answering an e-mail request, in the e-mail error shape; unknown errors are 500 `Server error`. */
export function toEmailError(error: unknown, bodyLimitBytes: number): MappedEmailError {
  if (error instanceof EmailRequestError) return fromFailure(error.failure);
  // The edge's hostile-text check (NUL bytes, lone surrogates) names the field.
  if (error instanceof DomainError && error.code === 'validation') return invalid(error.details.field ?? 'body', error.message);
  if (error instanceof DomainError && error.code === 'unavailable') {
    return { status: 503, body: { success: false, error: 'Server error', details: error.message }, unexpected: false, retryAfterSeconds: error.details.retryAfterSeconds ?? 1 };
  }
  if (error instanceof DomainError && error.code === 'rate_limited') {
    return { status: 429, body: { success: false, error: 'Too many requests', details: error.message }, unexpected: false, retryAfterSeconds: error.details.retryAfterSeconds ?? 60 };
  }
  if (isReservedKeyRefusal(error)) return invalid(RESERVED_KEY_FIELD, RESERVED_KEY_PROBLEM);
  if (error instanceof DuplicateKeyError) return invalid(error.path, error.problem);
  switch ((error as FastifyError).code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('body', 'is not valid JSON');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { ...invalid('body', unsupportedMediaMessage(error, 'must be JSON sent as Content-Type: application/json')), status: 415 };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalid('body', 'has an invalid Content-Length');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { ...invalid('body', `is larger than ${bodyLimitBytes} bytes`), status: 413 };
  }
  if (error instanceof SyntaxError) return invalid('body', 'is not valid JSON');
  return {
    status: 500,
    body: { success: false, error: 'Server error', details: 'The e-mail could not be queued and nothing was sent; retry the request (with the same idempotencyKey)' },
    unexpected: true,
  };
}

export function sendEmailError(request: FastifyRequest, reply: FastifyReply, error: unknown, bodyLimitBytes: number): FastifyReply {
  const mapped = toEmailError(outageAsUnavailable(error, request.log, request.method), bodyLimitBytes);
  if (mapped.unexpected) request.log.error({ err: error }, 'unexpected error');
  if (mapped.retryAfterSeconds !== undefined) reply.header('retry-after', String(mapped.retryAfterSeconds));
  return reply.status(mapped.status).send(mapped.body);
}

/** A path of the e-mail API asked with a method it does not serve (405), or no path of it (404), in its own shape. */
export const emailUnknownRoute: UnknownRouteShape = {
  prefixes: ['/api/email'],
  body: (status, message) => ({ success: false, error: status === 500 ? 'Server error' : message }),
};
