import type { EntityManager } from '@mikro-orm/postgresql';
import { apiKeyFromAuthorization, type ApiPrincipal } from '../../domain/auth/api-key.ts';
import { hashSecret } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { findPrincipalByKeyHash } from '../../data/queries/api-keys.ts';

/** Who the `Authorization` header speaks for; 401 for a missing, over-long or unknown key. */
export async function authenticateApiKey(em: EntityManager, authorization: string | undefined): Promise<ApiPrincipal> {
  const key = apiKeyFromAuthorization(authorization);
  if (!key) throw new DomainError('unauthenticated', 'Missing API key in the Authorization header');
  if (key.length > 512) throw new DomainError('unauthenticated', 'Invalid API key');
  const principal = await findPrincipalByKeyHash(em, hashSecret(key));
  if (!principal) throw new DomainError('unauthenticated', 'Invalid API key');
  return principal;
}
