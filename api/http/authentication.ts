import type { FastifyRequest } from 'fastify';
import { authenticateApiKey } from '../../services/auth/authenticate-api-key.ts';
import { consumeRateLimit } from '../../services/rate-limit/rate-limiter.ts';
import { authorizeAdmin, type AdminCaller, type ApiPrincipal } from '../../domain/auth/api-key.ts';

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The rate limit of keys whose tenant sets none, and the clock its windows are counted by (tests inject one). */
export interface RateLimitPolicy {
  readonly defaultPerMinute: number;
  readonly now: () => Date;
}

/** The tenant the `Authorization` key speaks for, after counting the call against the key's rate limit. */
export async function authenticateCaller(request: FastifyRequest, rateLimit: RateLimitPolicy): Promise<ApiPrincipal> {
  const principal = await authenticateApiKey(request.em, request.headers.authorization);
  await consumeRateLimit(request.em, `api-key:${principal.apiKeyId}`, principal.rateLimitPerMinute ?? rateLimit.defaultPerMinute, rateLimit.now());
  return principal;
}

/** An admin caller (spec 5.2): an authenticated key plus the `ClientId` and `UserEmail` headers. */
export async function authenticateAdmin(request: FastifyRequest, rateLimit: RateLimitPolicy): Promise<AdminCaller> {
  const principal = await authenticateCaller(request, rateLimit);
  return authorizeAdmin(principal, headerValue(request.headers.clientid), headerValue(request.headers.useremail));
}
