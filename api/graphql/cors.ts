import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';

/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;
/** What an admin UI sends: its key, JSON, Apollo's CSRF header for GETs, and the operation's name. */
const ALLOWED_HEADERS = 'authorization, content-type, apollo-require-preflight, x-apollo-operation-name';

/**
 * CORS for /graphql, for admin UIs on the origins configured (`GRAPHQL_ALLOWED_ORIGINS`, compared exactly as browsers
 * send `Origin`): their preflight is answered 204, their answers name their origin. Any other origin gets no CORS
 * header (the browser keeps the answer from the page) and its preflight is 403. A key still decides what any call may
 * do: CORS only decides which pages may read the answers.
 */
export function registerGraphQLCors(scope: FastifyInstance, allowedOrigins: readonly string[]): void {
  const allowed = new Set(allowedOrigins);
  const allowedOriginOf = (request: FastifyRequest): string | undefined => {
    const origin = request.headers.origin;
    return typeof origin === 'string' && allowed.has(origin) ? origin : undefined;
  };

  // Answers differ by Origin, so caches must keep them apart.
  scope.addHook('onRequest', async (request, reply) => {
    reply.header('vary', 'Origin');
    const origin = allowedOriginOf(request);
    if (origin) reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', 'Retry-After');
  });

  scope.options('/graphql', async (request, reply) => {
    const origin = allowedOriginOf(request);
    if (!origin) throw new DomainError('forbidden', 'This origin may not call /graphql from a browser');
    return reply
      .status(204)
      .header('access-control-allow-methods', 'GET, POST')
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
      .send();
  });
}
