import { generateSecret, hashSecret } from '../../domain/crypto/secret-box.ts';
import { LeadKeySet } from '../../schema/entities/index.ts';
import { assignChanges, type ChangeKind } from './changes.ts';
import type { TenantFixture } from './fixture.schema.ts';
import type { TenantScope } from './tenant-scope.ts';

export interface ProvisionedLeadKeys {
  change: ChangeKind;
  /** Only keys this run generated; both are stored hashed. */
  publishableKey?: string;
  secretKey?: string;
}

/** The tenant's lead key pair: generated once unless the fixture gives them; given keys replace stored ones. */
export async function provisionLeadKeys({ em, tenant, audit }: TenantScope, leads: NonNullable<TenantFixture['leads']>): Promise<ProvisionedLeadKeys> {
  const leadKeys = await em.findOne(LeadKeySet, { tenant });
  const { publishableKey, secretKey } = leads;
  if (!leadKeys) {
    const pk = publishableKey ?? generateSecret('pk_live_', 24);
    const sk = secretKey ?? generateSecret('sk_live_', 32);
    em.create(LeadKeySet, { tenant, publishableKeyHash: hashSecret(pk), secretKeyHash: hashSecret(sk) });
    audit('lead_keys.created', 'LeadKeySet', tenant.id);
    return { change: 'created', ...(publishableKey ? {} : { publishableKey: pk }), ...(secretKey ? {} : { secretKey: sk }) };
  }
  const values = {
    ...(publishableKey ? { publishableKeyHash: hashSecret(publishableKey) } : {}),
    ...(secretKey ? { secretKeyHash: hashSecret(secretKey) } : {}),
  };
  const change = assignChanges(leadKeys, values);
  if (change !== 'unchanged') audit('lead_keys.replaced', 'LeadKeySet', tenant.id);
  return { change };
}
