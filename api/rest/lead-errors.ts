import type { UnknownRouteShape } from '../http/method-not-allowed.ts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../../domain/errors.ts';
import { LeadQueryError, LeadValidationError } from '../../domain/leads/lead-errors.ts';
import { HostileTextError } from '../http/hostile-input.ts';
import { unsupportedMediaMessage } from '../http/content-encoding.ts';
import { isReservedKeyRefusal, RESERVED_KEY_FIELD, RESERVED_KEY_PROBLEM } from '../http/reserved-keys.ts';
import { DuplicateKeyError } from '../http/duplicate-keys.ts';
import { outageAsUnavailable } from '../http/outages.ts';

/**
 * The six failures of the lead API (DESIGN 4), the router's two and an outage's 503: its own envelope, unlike the rest
 * of the REST API.
 */
export const LEAD_ERROR_STATUS = {
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  validation_failed: 422,
  rate_limited: 429,
  internal_error: 500,
  /** PostgreSQL or Temporal away (an outage, not the request): retry after `Retry-After`, the write may have been kept. */
  unavailable: 503,
  /** A path under the lead API that names nothing, or a method it does not serve (the router's answers). */
  not_found: 404,
  method_not_allowed: 405,
} as const;
export type LeadErrorCode = keyof typeof LEAD_ERROR_STATUS;

export interface LeadErrorBody {
  ok: false;
  error: { code: LeadErrorCode; message: string; details: string[] };
}

interface MappedLeadError {
  readonly code: LeadErrorCode;
  readonly message: string;
  readonly details: readonly string[];
  readonly retryAfterSeconds?: number;
  /** A status other than the code's own: a malformed query string is 400 `validation_failed`. */
  readonly status?: number;
}

/** Domain codes the lead API can meet; anything else is a bug here and answers 500. */
const FROM_DOMAIN: Partial<Record<ErrorCode, LeadErrorCode>> = {
  validation: 'validation_failed',
  unauthenticated: 'unauthorized',
  forbidden: 'forbidden',
  rate_limited: 'rate_limited',
  unavailable: 'unavailable',
};

const invalidJson = (message: string): MappedLeadError => ({ code: 'invalid_json', message, details: [] });

/** Anything thrown while answering a lead request, as one of the six failures. */
export function toLeadError(error: unknown, bodyLimitBytes: number): MappedLeadError {
  if (error instanceof LeadQueryError) return { code: 'validation_failed', message: 'The query has invalid parameters', details: error.problems, status: 400 };
  if (error instanceof LeadValidationError) return { code: 'validation_failed', message: 'The request has invalid fields', details: error.problems };
  // A bad query parameter is 400 on the lead API, a bad body field 422 (as the query parser and the body parser answer).
  if (error instanceof HostileTextError && error.location !== 'body') {
    return { code: 'validation_failed', message: 'The query has invalid parameters', details: [detailOf(error.details.field!, error.message)], status: 400 };
  }
  if (error instanceof DomainError) {
    const code = FROM_DOMAIN[error.code] ?? 'internal_error';
    if (code === 'internal_error') return { code, message: 'Internal server error', details: [] };
    const details = code === 'validation_failed' ? [error.details.field ? detailOf(error.details.field, error.message) : error.message] : [];
    return { code, message: code === 'validation_failed' ? 'The request has invalid fields' : error.message, details, retryAfterSeconds: error.details.retryAfterSeconds };
  }
  if (isReservedKeyRefusal(error)) return { code: 'validation_failed', message: 'The request has invalid fields', details: [`${RESERVED_KEY_FIELD}: ${RESERVED_KEY_PROBLEM}`] };
  if (error instanceof DuplicateKeyError) return { code: 'validation_failed', message: 'The request has invalid fields', details: [detailOf(error.path, error.problem)] };
  switch ((error as FastifyError).code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidJson('The body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalidJson(unsupportedMediaMessage(error, 'The body must be JSON sent as Content-Type: application/json'));
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalidJson('Invalid Content-Length');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'validation_failed', message: 'The request has invalid fields', details: [`body: larger than ${bodyLimitBytes} bytes`] };
  }
  if (error instanceof SyntaxError) return invalidJson('The body is not valid JSON');
  return { code: 'internal_error', message: 'Internal server error', details: [] };
}

export function sendLeadError(request: FastifyRequest, reply: FastifyReply, error: unknown, bodyLimitBytes: number): FastifyReply {
  // PostgreSQL away is a 503 to retry, never an `internal_error`: a lead write may have been kept before it went.
  const mapped = toLeadError(outageAsUnavailable(error, request.log, request.method), bodyLimitBytes);
  if (mapped.code === 'internal_error') request.log.error({ err: error }, 'unexpected error');
  if (mapped.retryAfterSeconds !== undefined) reply.header('retry-after', String(mapped.retryAfterSeconds));
  const body: LeadErrorBody = { ok: false, error: { code: mapped.code, message: mapped.message, details: [...mapped.details] } };
  return reply.status(mapped.status ?? LEAD_ERROR_STATUS[mapped.code]).send(body);
}

const LEAD_ROUTE_CODES: Record<400 | 404 | 405 | 500, LeadErrorCode> = { 400: 'validation_failed', 404: 'not_found', 405: 'method_not_allowed', 500: 'internal_error' };

/** A path of the lead API asked with a method it does not serve (405), or no path of it (404), in its own shape. */
export const leadUnknownRoute: UnknownRouteShape = {
  prefixes: ['/api/public/customer-leads'],
  body: (status, message) => ({ ok: false, error: { code: LEAD_ROUTE_CODES[status], message, details: [] } }),
};

/** One `details` entry, `name: problem` as the lead API writes them, the name said once (`email: must not contain …`). */
function detailOf(field: string, message: string): string {
  return `${field}: ${message.startsWith(`${field} `) ? message.slice(field.length + 1) : message}`;
}
