import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';

/** What a request arriving while the gateway stops is told. */
export const CLOSING_MESSAGE = 'The gateway is shutting down and took nothing from this request; send it again';

/** Seconds a caller is asked to wait: another instance, or this one restarted, is expected to answer by then. */
const RETRY_AFTER_SECONDS = 1;

/**
 * A request that arrives once the gateway has begun to close (on a keep-alive connection, or pipelined) is refused
 * before any of its work starts: 503 with `Retry-After`, in the shape of the API it was sent to, through that API's
 * own error handler. Fastify's built-in refusal (`return503OnClosing`) answers every path with its own body and no
 * `Retry-After`, which neither a Payments API client nor a GraphQL client reads as "send again". Fastify still
 * marks these answers `Connection: close`, so the caller's next request opens a connection elsewhere.
 */
export function refuseRequestsWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, _reply, next) => {
    next(closing ? new DomainError('unavailable', CLOSING_MESSAGE, { retryAfterSeconds: RETRY_AFTER_SECONDS, nothingTaken: true }) : undefined);
  });
}
