import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
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
export async function generateLeadKeys(em: EntityManager, input: { tenantId: number; applicationSlug: string; environment: LeadEnvironment; actor: string }): Promise<GeneratedLeadKeys> {
  const publishableKey = generateSecret(leadKeyPrefix('publishable', input.environment), 24);
  const secretKey = generateSecret(leadKeyPrefix('secret', input.environment), 32);
  // Audited as provisioning audits it (which application and environment, never the keys), in the same transaction.
  const replaced = await em.transactional(async (tx) => {
    const pair = await replaceLeadKeyPair(tx, { ...input, publishableKeyHash: hashSecret(publishableKey), secretKeyHash: hashSecret(secretKey) });
    if (pair) await recordAuditEntry(tx, { tenantId: input.tenantId, actor: input.actor, action: 'lead_keys.replaced', entityType: 'LeadKeySet', entityId: String(pair.applicationId), changes: { application: input.applicationSlug, environment: input.environment } });
    return pair;
  });
  if (!replaced) throw unknownApplication(input.applicationSlug);
  return { applicationId: replaced.applicationId, environment: input.environment, publishableKey, secretKey };
}

const MAX_ORIGINS = 100;

/** Replaces an application's allowed origins, each kept as a browser sends it as `Origin` (`canonicalOrigin`). */
export async function replaceAllowedOrigins(em: EntityManager, input: { tenantId: number; applicationSlug: string; origins: readonly string[]; actor: string }): Promise<LeadApplication> {
  const origins = input.origins.map(canonicalOrigin);
  const problems = origins.flatMap((origin, index) => (origin !== undefined ? [] : [`origins[${index}]: must be scheme://host[:port] with a host name or IP address (no wildcard), as browsers send Origin`]));
  if (input.origins.length > MAX_ORIGINS) problems.push(`origins: at most ${MAX_ORIGINS}`);
  if (problems.length > 0) throw new LeadValidationError(problems);
  const application = await em.transactional(async (tx) => {
    const updated = await setLeadAllowedOrigins(tx, { ...input, origins: [...new Set(origins as string[])] });
    if (updated) await recordAuditEntry(tx, { tenantId: input.tenantId, actor: input.actor, action: 'lead_origins.replaced', entityType: 'Application', entityId: String(updated.id), changes: { origins: updated.allowedOrigins } });
    return updated;
  });
  if (!application) throw unknownApplication(input.applicationSlug);
  return application;
}
