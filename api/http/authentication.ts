import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { authenticateApiKey } from '../../services/auth/authenticate-api-key.ts';
import type { RateLimitPolicy } from '../../services/rate-limit/rate-limiter.ts';
import { authorizeAdmin, type AdminCaller, type ApiPrincipal } from '../../domain/auth/api-key.ts';
import { headerValue, utf8HeaderValue } from './headers.ts';
import { DomainError } from '../../domain/errors.ts';
import { timesGiven } from './raw-headers.ts';

export type { RateLimitPolicy };

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant the request's API key speaks for: set before the body is read on every route that needs a key. */
    principal: ApiPrincipal | null;
    /** The admin caller (key, `ClientId`, `UserEmail`) of a route documenting the admin headers, set likewise. */
    adminCaller: AdminCaller | null;
  }
}

/** Whether a route's OpenAPI `security` asks for the tenant API key (`API_KEY_REQUIRED`). */
function needsApiKey(security: unknown): boolean {
  return Array.isArray(security) && security.some((requirement) => typeof requirement === 'object' && requirement !== null && 'apiKey' in requirement);
}

/** Whether a route documents the admin headers (`AdminHeaders`: `ClientId` and `UserEmail`). */
function needsAdminHeaders(headers: unknown): boolean {
  const properties = (headers as { properties?: unknown } | undefined)?.properties;
  return typeof properties === 'object' && properties !== null && 'ClientId' in properties;
}

/**
 * Every route documented as needing the tenant API key checks it first, in `onRequest`: before its body is read,
 * parsed or validated and before its query string is looked at. A caller without a valid key gets 401 whatever it
 * sent, never the route's field-level 400s (or a 413/415), and the document's `security` is what the gateway
 * enforces: a new route cannot forget its key. One statement on the counter pool finds the key and counts the call
 * against its rate limit. A route that documents the admin headers then checks them in the same hook (decisions.md:
 * key 401, rate limit 429, `ClientId` 400/403, `UserEmail` 400, and only then the request). Call before the routes
 * are registered (an `onRoute` hook sees only later routes).
 */
export function requireDocumentedApiKeys(app: FastifyInstance, rateLimit: RateLimitPolicy): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('adminCaller', null);
  const authenticate: onRequestHookHandler = async (request) => {
    request.principal = await authenticateApiKey(onlyAuthorization(request), rateLimit);
  };
  const authenticateAdmin: onRequestHookHandler = async (request) => {
    request.principal = await authenticateApiKey(onlyAuthorization(request), rateLimit);
    request.adminCaller = authorizeAdmin(request.principal, headerValue(request.headers.clientid), utf8HeaderValue(request.headers.useremail, 'UserEmail'));
  };
  app.addHook('onRoute', (route) => {
    if (!needsApiKey(route.schema?.security)) return;
    const check = needsAdminHeaders(route.schema?.headers) ? authenticateAdmin : authenticate;
    route.onRequest = [check, ...[route.onRequest ?? []].flat()];
  });
}

/**
 * The request's one `Authorization` header. Node keeps the first of several and drops the rest, so a request sent with
 * two keys (two tenants', a proxy's and the caller's) would be served as the first's: ambiguous credentials are
 * refused (401) instead.
 */
function onlyAuthorization(request: FastifyRequest): string | undefined {
  if (timesGiven(request, 'authorization') > 1) throw new DomainError('unauthenticated', 'Authorization is given more than once; send one API key');
  return request.headers.authorization;
}

/** The tenant the request's key speaks for (checked in `onRequest` by `requireDocumentedApiKeys`). */
export function callerOf(request: FastifyRequest): ApiPrincipal {
  if (!request.principal) throw new Error(`${request.routeOptions.url ?? request.url} reads a caller but documents no API key`);
  return request.principal;
}

/** An admin caller (spec 5.2): the request's key plus its `ClientId` and `UserEmail` (checked in `onRequest`). */
export function adminCallerOf(request: FastifyRequest): AdminCaller {
  if (!request.adminCaller) throw new Error(`${request.routeOptions.url ?? request.url} reads an admin caller but documents no admin headers`);
  return request.adminCaller;
}
