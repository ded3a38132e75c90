import { SenderDomain } from '../../schema/entities/index.ts';
import type { TenantScope } from './tenant-scope.ts';

/** The domains the tenant may send e-mail from become exactly the fixture's (case-insensitive). */
export async function syncSenderDomains({ em, tenant, audit }: TenantScope, senderDomains: readonly string[]): Promise<void> {
  const wanted = new Set(senderDomains.map((d) => d.toLowerCase()));
  const current = await em.find(SenderDomain, { tenant });
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
