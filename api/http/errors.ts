import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../../domain/errors.ts';
import { describeSchemaErrors } from '../../domain/validation/json-schema.ts';
import { unsupportedMediaMessage } from './content-encoding.ts';
import { isReservedKeyRefusal, RESERVED_KEY_FIELD, RESERVED_KEY_PROBLEM } from './reserved-keys.ts';
import { DuplicateKeyError } from './duplicate-keys.ts';
import { outageAsUnavailable } from './outages.ts';

/** HTTP status of each domain error code; exhaustive, so a new code cannot go unmapped. */
export const HTTP_STATUS = {
  validation: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  rate_limited: 429,
  unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

/** What every non-2xx REST answer of the payment/admin APIs looks like (DESIGN 4). */
export interface ErrorBody {
  success: false;
  message: string;
}

/** Turns anything thrown in a route into a typed, documented answer; unknown errors become 500. */
export function toHttpError(error: unknown): { status: number; message: string; retryAfterSeconds?: number; unexpected: boolean } {
  if (error instanceof DomainError) {
    return { status: HTTP_STATUS[error.code], message: error.message, retryAfterSeconds: error.details.retryAfterSeconds, unexpected: false };
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation && fastifyError.validation.length > 0) {
    const root = fastifyError.validationContext ?? 'body';
    return { status: 400, message: describeSchemaErrors(fastifyError.validation as never, root === 'querystring' ? 'query' : root), unexpected: false };
  }
  if (isReservedKeyRefusal(error)) return { status: 400, message: `${RESERVED_KEY_FIELD}: ${RESERVED_KEY_PROBLEM}`, unexpected: false };
  if (error instanceof DuplicateKeyError) return { status: 400, message: error.message, unexpected: false };
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'Invalid JSON body', unexpected: false };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: 'Request body too large', unexpected: false };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: unsupportedMediaMessage(error, 'Content-Type must be application/json'), unexpected: false };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, message: 'Invalid Content-Length', unexpected: false };
  }
  if (error instanceof SyntaxError) return { status: 400, message: 'Invalid JSON body', unexpected: false };
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, message: fastifyError.message, unexpected: false };
  return { status: 500, message: 'Internal server error', unexpected: true };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const mapped = toHttpError(outageAsUnavailable(error, request.log, request.method));
  if (mapped.unexpected) request.log.error({ err: error }, 'unexpected error');
  if (mapped.retryAfterSeconds !== undefined) reply.header('retry-after', String(mapped.retryAfterSeconds));
  const body: ErrorBody = { success: false, message: mapped.message };
  return reply.status(mapped.status).send(body);
}
