import type { FastifyRequest } from 'fastify';
import { authenticateApiKey } from '../../services/auth/authenticate-api-key.ts';
import type { RateLimitPolicy } from '../../services/rate-limit/rate-limiter.ts';
import { authorizeAdmin, type AdminCaller, type ApiPrincipal } from '../../domain/auth/api-key.ts';

export type { RateLimitPolicy };

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The tenant the `Authorization` key speaks for, after counting the call against the key's rate limit: one
 * statement on the counter pool finds the key and counts the call.
 */
export async function authenticateCaller(request: FastifyRequest, rateLimit: RateLimitPolicy): Promise<ApiPrincipal> {
  return authenticateApiKey(request.headers.authorization, rateLimit);
}

/** An admin caller (spec 5.2): an authenticated key plus the `ClientId` and `UserEmail` headers. */
export async function authenticateAdmin(request: FastifyRequest, rateLimit: RateLimitPolicy): Promise<AdminCaller> {
  const principal = await authenticateCaller(request, rateLimit);
  return authorizeAdmin(principal, headerValue(request.headers.clientid), headerValue(request.headers.useremail));
}
