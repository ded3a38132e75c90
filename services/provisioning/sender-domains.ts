import { lockTenantSenderDomains } from '../../data/queries/sender-domains.ts';
import { SenderDomain } from '../../schema/entities/index.ts';
import type { TenantScope } from './tenant-scope.ts';

/**
 * The domains the tenant may send e-mail from become exactly the fixture's (case-insensitive). Runs in the caller's
 * transaction, under the tenant's sender-domain lock, so the domains read are the ones the difference applies to.
 */
export async function syncSenderDomains({ em, tenant, audit }: TenantScope, senderDomains: readonly string[]): Promise<void> {
  const wanted = new Set(senderDomains.map((d) => d.toLowerCase()));
  await lockTenantSenderDomains(em, tenant.id);
  // Read after the lock (a statement of its own, so it sees what a replace that held the lock committed).
  const current = await em.find(SenderDomain, { tenant }, { refresh: true });
  for (const domain of current) {
    if (!wanted.has(domain.domain)) {
      em.remove(domain);
      audit('sender_domain.removed', 'SenderDomain', domain.id, { domain: domain.domain });
    }
  }
  for (const domain of wanted) {
    if (!current.some((d) => d.domain === domain)) {
      em.create(SenderDomain, { tenant, domain });
      audit('sender_domain.added', 'SenderDomain', domain, { domain });
    }
  }
}
