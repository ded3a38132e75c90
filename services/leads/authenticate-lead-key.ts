import { findLeadKeyAndAdmit, findLeadKeyByHash, type LeadKeyPrincipal } from '../../data/queries/lead-keys.ts';
import { hashSecret } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { parseLeadKey, type LeadKeyKind } from '../../domain/leads/lead-keys.ts';
import { settleAdmission, slidingWindowAt, type RateLimitPolicy } from '../rate-limit/rate-limiter.ts';

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

const unauthorized = (message: string) => new DomainError('unauthenticated', message);
const invalidKey = (kind: LeadKeyKind) => unauthorized(kind === 'secret' ? 'Invalid secret lead key' : 'Invalid publishable lead key');

/** The key's hash, once it has the shape of a `kind` key (401 otherwise, without asking the database). */
function hashOf(kind: LeadKeyKind, key: string): string {
  const parsed = parseLeadKey(key);
  if (!parsed || parsed.kind !== kind) throw invalidKey(kind);
  return hashSecret(key);
}

function secretKeyOf(authorization: string): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthorized('Authorization must be "Bearer <secret lead key>"');
  return match[1]!;
}

/**
 * Finds the key and counts the request in one statement on the counter pool: 401 for an unknown key, 403 for a
 * publishable key from an origin its application does not allow (not counted), 429 over the limit.
 */
async function admit(kind: LeadKeyKind, key: string, credentials: LeadCredentials, rateLimit: RateLimitPolicy): Promise<LeadKeyPrincipal> {
  const keyHash = hashOf(kind, key);
  const { counters } = rateLimit;
  const window = slidingWindowAt(rateLimit.now());
  const admission = await findLeadKeyAndAdmit(counters, {
    kind,
    keyHash,
    clientAddress: credentials.clientAddress,
    origin: credentials.origin,
    defaultLimit: rateLimit.defaultPerMinute,
    window,
  });
  if (!admission) throw invalidKey(kind);
  if (!admission.counted) throw new DomainError('forbidden', `Origin ${credentials.origin ?? '(none)'} is not an allowed origin of this lead key`);
  await settleAdmission(counters, admission, window);
  return admission.row;
}

/**
 * Who may write a lead: a server with the secret key, or a browser with the publishable key whose `Origin` is
 * exactly one of the application's allowed origins (403 otherwise). The secret key wins when both are sent.
 */
export async function authenticateLeadWrite(credentials: LeadCredentials, rateLimit: RateLimitPolicy): Promise<LeadKeyPrincipal> {
  if (credentials.authorization) return admit('secret', secretKeyOf(credentials.authorization), credentials, rateLimit);
  if (credentials.publishableKey) return admit('publishable', credentials.publishableKey, credentials, rateLimit);
  throw unauthorized('Send the publishable key in X-Service-Lead-Key or the secret key as Authorization: Bearer');
}

/** Who may read leads: the secret key only; a valid publishable key is refused with 403 (it cannot read). */
export async function authenticateLeadRead(credentials: LeadCredentials, rateLimit: RateLimitPolicy): Promise<LeadKeyPrincipal> {
  if (!credentials.authorization) {
    if (credentials.publishableKey) return refusePublishableRead(credentials.publishableKey, rateLimit);
    throw unauthorized('Send the secret lead key as Authorization: Bearer');
  }
  const key = secretKeyOf(credentials.authorization);
  // A publishable key sent as the bearer is the same mistake as one sent in its own header: the same 403.
  if (parseLeadKey(key)?.kind === 'publishable') return refusePublishableRead(key, rateLimit);
  return admit('secret', key, credentials, rateLimit);
}

/** 401 for an unknown publishable key, 403 for a known one; not counted: it never reads, it only learns whether it is valid. */
async function refusePublishableRead(publishableKey: string, rateLimit: RateLimitPolicy): Promise<never> {
  const known = await findLeadKeyByHash(rateLimit.counters, 'publishable', hashOf('publishable', publishableKey));
  if (!known) throw invalidKey('publishable');
  throw new DomainError('forbidden', 'Publishable lead keys cannot read leads; use the secret key from a server');
}
