import { apiKeyFromAuthorization, type ApiPrincipal } from '../../domain/auth/api-key.ts';
import { hashSecret } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { parseLeadKey } from '../../domain/leads/lead-keys.ts';
import { findPrincipalAndAdmit } from '../../data/queries/api-keys.ts';
import { settleAdmission, slidingWindowAt, type RateLimitPolicy } from '../rate-limit/rate-limiter.ts';

/**
 * Who the `Authorization` header speaks for, after counting the call against the key's rate limit: 401 for a
 * missing, over-long or unknown key, 429 over the limit. The key is found and counted by one statement on the
 * counter pool.
 */
export async function authenticateApiKey(authorization: string | undefined, rateLimit: RateLimitPolicy): Promise<ApiPrincipal> {
  const key = apiKeyFromAuthorization(authorization);
  if (!key) throw new DomainError('unauthenticated', 'Missing API key in the Authorization header');
  if (key.length > 512) throw new DomainError('unauthenticated', 'Invalid API key');
  const { counters } = rateLimit;
  const window = slidingWindowAt(rateLimit.now());
  const admission = await findPrincipalAndAdmit(counters, { keyHash: hashSecret(key), defaultLimit: rateLimit.defaultPerMinute, window });
  if (!admission) {
    // A customer-lead key sent where the API key belongs: say so, rather than leave the caller doubting a valid key.
    const leadKey = parseLeadKey(key);
    if (leadKey) throw new DomainError('unauthenticated', `Invalid API key: a ${leadKey.kind} customer-lead key works on the customer-leads API only; send the tenant's API key`);
    throw new DomainError('unauthenticated', 'Invalid API key');
  }
  await settleAdmission(counters, admission, window);
  return admission.row;
}
