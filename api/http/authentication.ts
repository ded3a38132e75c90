import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { authenticateApiKey } from '../../services/auth/authenticate-api-key.ts';
import type { RateLimitPolicy } from '../../services/rate-limit/rate-limiter.ts';
import { authorizeAdmin, type AdminCaller, type ApiPrincipal } from '../../domain/auth/api-key.ts';

export type { RateLimitPolicy };

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant the request's API key speaks for: set before the body is read on every route that needs a key. */
    principal: ApiPrincipal | null;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Whether a route's OpenAPI `security` asks for the tenant API key (`API_KEY_REQUIRED`). */
function needsApiKey(security: unknown): boolean {
  return Array.isArray(security) && security.some((requirement) => typeof requirement === 'object' && requirement !== null && 'apiKey' in requirement);
}

/**
 * Every route documented as needing the tenant API key checks it first, in `onRequest`: before its body is read,
 * parsed or validated and before its query string is looked at. A caller without a valid key gets 401 whatever it
 * sent, never the route's field-level 400s (or a 413/415), and the document's `security` is what the gateway
 * enforces: a new route cannot forget its key. One statement on the counter pool finds the key and counts the call
 * against its rate limit. Call before the routes are registered (an `onRoute` hook sees only later routes).
 */
export function requireDocumentedApiKeys(app: FastifyInstance, rateLimit: RateLimitPolicy): void {
  app.decorateRequest('principal', null);
  const authenticate: onRequestHookHandler = async (request) => {
    request.principal = await authenticateApiKey(request.headers.authorization, rateLimit);
  };
  app.addHook('onRoute', (route) => {
    if (!needsApiKey(route.schema?.security)) return;
    route.onRequest = [authenticate, ...[route.onRequest ?? []].flat()];
  });
}

/** The tenant the request's key speaks for (checked in `onRequest` by `requireDocumentedApiKeys`). */
export function callerOf(request: FastifyRequest): ApiPrincipal {
  if (!request.principal) throw new Error(`${request.routeOptions.url ?? request.url} reads a caller but documents no API key`);
  return request.principal;
}

/** An admin caller (spec 5.2): the request's authenticated key plus the `ClientId` and `UserEmail` headers. */
export function adminCallerOf(request: FastifyRequest): AdminCaller {
  return authorizeAdmin(callerOf(request), headerValue(request.headers.clientid), headerValue(request.headers.useremail));
}
