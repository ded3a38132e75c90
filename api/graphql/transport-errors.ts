import type { FastifyReply, FastifyRequest } from 'fastify';
import { toHttpError } from '../http/errors.ts';
import type { UnknownRouteShape } from '../http/method-not-allowed.ts';
import { outageAsUnavailable } from '../http/outages.ts';

/** GraphQL codes of the refusals Fastify makes before Apollo sees a request, by HTTP status. */
const TRANSPORT_CODES: Record<number, string> = { 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE', 429: 'RATE_LIMITED', 503: 'SERVICE_UNAVAILABLE' };

/**
 * A request to `/graphql` refused before Apollo runs (a body that is not JSON, too large, of another media type)
 * answers in GraphQL's error shape with the same status REST would give: an admin UI's GraphQL client reads
 * `errors[0].extensions.code`, never the REST body. Malformed requests are `BAD_REQUEST`, as Apollo labels its own.
 */
export function sendGraphQLTransportError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const mapped = toHttpError(outageAsUnavailable(error, request.log, request.method));
  if (mapped.unexpected) request.log.error({ err: error }, 'unexpected error');
  if (mapped.retryAfterSeconds !== undefined) reply.header('retry-after', String(mapped.retryAfterSeconds));
  const code = mapped.unexpected ? 'INTERNAL_SERVER_ERROR' : (TRANSPORT_CODES[mapped.status] ?? 'BAD_REQUEST');
  return reply
    .status(mapped.status)
    .type('application/json; charset=utf-8')
    .send({ errors: [{ message: mapped.message, extensions: { code } }] });
}

const ROUTE_CODES = { 400: 'BAD_REQUEST', 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 500: 'INTERNAL_SERVER_ERROR' } as const;

/** `/graphql` asked with a method it does not serve (405), or a path under it (404), in GraphQL's error shape. */
export const graphQLUnknownRoute: UnknownRouteShape = {
  prefixes: ['/graphql'],
  body: (status, message) => ({ errors: [{ message, extensions: { code: ROUTE_CODES[status] } }] }),
};
