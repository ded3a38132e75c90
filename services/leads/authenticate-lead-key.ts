import type { EntityManager } from '@mikro-orm/postgresql';
import { findLeadKeyByHash, type LeadKeyPrincipal } from '../../data/queries/lead-keys.ts';
import { hashSecret } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { parseLeadKey, type LeadKeyKind } from '../../domain/leads/lead-keys.ts';
import { consumeRateLimit } from '../rate-limit/rate-limiter.ts';

/** The credentials a lead request may carry (spec 5.3). */
export interface LeadCredentials {
  /** `Authorization: Bearer sk_...` (servers). */
  readonly authorization?: string;
  /** `X-Service-Lead-Key: pk_...` (browsers). */
  readonly publishableKey?: string;
  /** The browser's `Origin`, when it sent one. */
  readonly origin?: string;
  /** The caller's address: browsers share a publishable key, so its rate limit is counted per address. */
  readonly clientAddress: string;
}

export interface LeadRateLimit {
  readonly defaultPerMinute: number;
  readonly now: () => Date;
}

const unauthorized = (message: string) => new DomainError('unauthenticated', message);

async function lookUp(em: EntityManager, kind: LeadKeyKind, key: string): Promise<LeadKeyPrincipal> {
  const parsed = parseLeadKey(key);
  if (!parsed || parsed.kind !== kind) throw unauthorized(kind === 'secret' ? 'Invalid secret lead key' : 'Invalid publishable lead key');
  const principal = await findLeadKeyByHash(em, kind, hashSecret(key));
  if (!principal) throw unauthorized(kind === 'secret' ? 'Invalid secret lead key' : 'Invalid publishable lead key');
  return principal;
}

function secretKeyOf(authorization: string): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthorized('Authorization must be "Bearer <secret lead key>"');
  return match[1]!;
}

async function countRequest(em: EntityManager, principal: LeadKeyPrincipal, credentials: LeadCredentials, rateLimit: LeadRateLimit): Promise<void> {
  const subject = principal.kind === 'secret' ? `lead-sk:${principal.keySetId}` : `lead-pk:${principal.keySetId}:${credentials.clientAddress}`;
  await consumeRateLimit(em, subject, principal.rateLimitPerMinute ?? rateLimit.defaultPerMinute, rateLimit.now());
}

/**
 * Who may write a lead: a server with the secret key, or a browser with the publishable key whose `Origin` is
 * exactly one of the application's allowed origins (403 otherwise). The secret key wins when both are sent.
 */
export async function authenticateLeadWrite(em: EntityManager, credentials: LeadCredentials, rateLimit: LeadRateLimit): Promise<LeadKeyPrincipal> {
  let principal: LeadKeyPrincipal;
  if (credentials.authorization) {
    principal = await lookUp(em, 'secret', secretKeyOf(credentials.authorization));
  } else if (credentials.publishableKey) {
    principal = await lookUp(em, 'publishable', credentials.publishableKey);
    if (!credentials.origin || !principal.allowedOrigins.includes(credentials.origin)) {
      throw new DomainError('forbidden', `Origin ${credentials.origin ?? '(none)'} is not an allowed origin of this lead key`);
    }
  } else {
    throw unauthorized('Send the publishable key in X-Service-Lead-Key or the secret key as Authorization: Bearer');
  }
  await countRequest(em, principal, credentials, rateLimit);
  return principal;
}

/** Who may read leads: the secret key only; a valid publishable key is refused with 403 (it cannot read). */
export async function authenticateLeadRead(em: EntityManager, credentials: LeadCredentials, rateLimit: LeadRateLimit): Promise<LeadKeyPrincipal> {
  if (!credentials.authorization) {
    if (credentials.publishableKey) {
      await lookUp(em, 'publishable', credentials.publishableKey);
      throw new DomainError('forbidden', 'Publishable lead keys cannot read leads; use the secret key from a server');
    }
    throw unauthorized('Send the secret lead key as Authorization: Bearer');
  }
  const principal = await lookUp(em, 'secret', secretKeyOf(credentials.authorization));
  await countRequest(em, principal, credentials, rateLimit);
  return principal;
}
