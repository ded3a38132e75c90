import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../domain/errors.ts';
import { Tenant } from '../../schema/entities/index.ts';
import { auditFor } from '../provisioning/tenant-scope.ts';
import { syncSenderDomains } from '../provisioning/sender-domains.ts';
import { lockTenantsToProvision } from '../../data/queries/provisioning.ts';

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const MAX_DOMAINS = 100;

export interface TenantSenderDomains {
  readonly tenantId: number;
  /** The `tenant_key` the e-mail API takes for this tenant. */
  readonly tenantKey: string;
  readonly domains: readonly string[];
}

/**
 * Replaces the domains a tenant may send e-mail from (spec 5.4: "added through the account manager"), the same
 * way provisioning does, audited as the operator's change. Domains are compared case-insensitively.
 */
export async function replaceSenderDomains(em: EntityManager, input: { tenantId: number; domains: readonly string[]; actor: string }): Promise<TenantSenderDomains> {
  const given = input.domains.map((d) => d.trim().toLowerCase());
  // Named by its place in the list as sent, before repeats are dropped.
  const bad = given.findIndex((domain) => !DOMAIN.test(domain));
  if (bad >= 0) throw new DomainError('validation', `domains[${bad}] must be a domain name such as shop.example`, { field: `domains[${bad}]` });
  const domains = [...new Set(given)];
  if (domains.length > MAX_DOMAINS) throw new DomainError('validation', `at most ${MAX_DOMAINS} domains`, { field: 'domains' });
  return em.transactional(async (tx) => {
    const tenant = await tx.findOne(Tenant, { id: input.tenantId });
    if (!tenant) throw new DomainError('not_found', `No tenant ${input.tenantId}`, { field: 'tenantId' });
    // Provisioning's lock first, as provisioning takes it before the tenant's row and its sender-domain lock: one order
    // of locks, so a replace and a provisioning of the tenant wait for each other instead of deadlocking.
    await lockTenantsToProvision(tx, [tenant.slug]);
    await syncSenderDomains({ em: tx, tenant, audit: auditFor(tx, tenant, input.actor) }, domains);
    await tx.flush();
    return { tenantId: tenant.id, tenantKey: tenant.emailTenantKey, domains: domains.sort() };
  });
}
