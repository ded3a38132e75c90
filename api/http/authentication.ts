import type { FastifyRequest } from 'fastify';
import { authenticateApiKey } from '../../services/auth/authenticate-api-key.ts';
import { consumeRateLimit } from '../../services/rate-limit/rate-limiter.ts';
import { authorizeAdmin, type AdminCaller, type ApiPrincipal } from '../../domain/auth/api-key.ts';

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The tenant the `Authorization` key speaks for, after counting the call against the key's rate limit. */
export async function authenticateCaller(request: FastifyRequest, defaultRateLimitPerMinute: number): Promise<ApiPrincipal> {
  const principal = await authenticateApiKey(request.em, request.headers.authorization);
  await consumeRateLimit(request.em, `api-key:${principal.apiKeyId}`, principal.rateLimitPerMinute ?? defaultRateLimitPerMinute);
  return principal;
}

/** An admin caller (spec 5.2): an authenticated key plus the `ClientId` and `UserEmail` headers. */
export async function authenticateAdmin(request: FastifyRequest, defaultRateLimitPerMinute: number): Promise<AdminCaller> {
  const principal = await authenticateCaller(request, defaultRateLimitPerMinute);
  return authorizeAdmin(principal, headerValue(request.headers.clientid), headerValue(request.headers.useremail));
}
