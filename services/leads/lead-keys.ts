import type { EntityManager } from '@mikro-orm/postgresql';
import { replaceLeadKeyPair, setLeadAllowedOrigins, type LeadApplication } from '../../data/queries/lead-keys.ts';
import { generateSecret, hashSecret } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { leadKeyPrefix, type LeadEnvironment } from '../../domain/leads/lead-keys.ts';
import { LeadValidationError } from '../../domain/leads/lead-errors.ts';
import { canonicalOrigin } from '../../domain/leads/origins.ts';

export interface GeneratedLeadKeys {
  readonly applicationId: number;
  readonly environment: LeadEnvironment;
  /** Shown once: only their hashes are stored. */
  readonly publishableKey: string;
  readonly secretKey: string;
}

const unknownApplication = (slug: string) => new DomainError('not_found', `The tenant has no application ${slug}`, { field: 'application' });

/** A new key pair for an application and environment; the previous pair stops working when this commits. */
export async function generateLeadKeys(em: EntityManager, input: { tenantId: number; applicationSlug: string; environment: LeadEnvironment }): Promise<GeneratedLeadKeys> {
  const publishableKey = generateSecret(leadKeyPrefix('publishable', input.environment), 24);
  const secretKey = generateSecret(leadKeyPrefix('secret', input.environment), 32);
  const replaced = await replaceLeadKeyPair(em, { ...input, publishableKeyHash: hashSecret(publishableKey), secretKeyHash: hashSecret(secretKey) });
  if (!replaced) throw unknownApplication(input.applicationSlug);
  return { applicationId: replaced.applicationId, environment: input.environment, publishableKey, secretKey };
}

const MAX_ORIGINS = 100;

/** Replaces an application's allowed origins, each kept as a browser sends it as `Origin` (`canonicalOrigin`). */
export async function replaceAllowedOrigins(em: EntityManager, input: { tenantId: number; applicationSlug: string; origins: readonly string[] }): Promise<LeadApplication> {
  const origins = input.origins.map(canonicalOrigin);
  const problems = origins.flatMap((origin, index) => (origin !== undefined ? [] : [`origins[${index}]: must be scheme://host[:port], as browsers send Origin`]));
  if (input.origins.length > MAX_ORIGINS) problems.push(`origins: at most ${MAX_ORIGINS}`);
  if (problems.length > 0) throw new LeadValidationError(problems);
  const application = await setLeadAllowedOrigins(em, { ...input, origins: [...new Set(origins as string[])] });
  if (!application) throw unknownApplication(input.applicationSlug);
  return application;
}
