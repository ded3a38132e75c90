import { generateSecret, hashSecret } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { leadKeyPrefix, parseLeadKey, type LeadEnvironment } from '../../domain/leads/lead-keys.ts';
import { LeadKeySet, type Application } from '../../schema/entities/index.ts';
import { assignChanges, type ChangeKind } from './changes.ts';
import type { TenantFixture } from './fixture.schema.ts';
import type { TenantScope } from './tenant-scope.ts';
import { applicationOf } from './tenant.ts';

export interface ProvisionedLeadKeys {
  change: ChangeKind;
  application: string;
  environment: LeadEnvironment;
  /** Only keys this run generated; both are stored hashed. */
  publishableKey?: string;
  secretKey?: string;
}

type LeadsFixture = NonNullable<TenantFixture['leads']>;

/** The environment of the pair: as declared, else as the given keys' prefixes say, else live; never mixed. */
function environmentOf(leads: LeadsFixture): LeadEnvironment {
  const fromKeys = [leads.publishableKey, leads.secretKey].flatMap((key) => (key ? [parseLeadKey(key)!.environment] : []));
  const environment = leads.environment ?? fromKeys[0] ?? 'live';
  if (fromKeys.some((e) => e !== environment)) throw new DomainError('validation', `leads: the given keys are not both ${environment} keys`, { field: 'leads' });
  return environment;
}

/** One application's lead key pair: generated once unless the fixture gives them; given keys replace stored ones. */
export async function provisionLeadKeys(scope: TenantScope, leads: LeadsFixture): Promise<ProvisionedLeadKeys> {
  const { em, tenant, audit } = scope;
  const environment = environmentOf(leads);
  const application = await applicationOfPair(scope, leads.application, environment);
  const target = { application: application.slug, environment };
  const leadKeys = await em.findOne(LeadKeySet, { application, environment });
  const { publishableKey, secretKey } = leads;
  if (!leadKeys) {
    const pk = publishableKey ?? generateSecret(leadKeyPrefix('publishable', environment), 24);
    const sk = secretKey ?? generateSecret(leadKeyPrefix('secret', environment), 32);
    em.create(LeadKeySet, { tenant, application, environment, publishableKeyHash: hashSecret(pk), secretKeyHash: hashSecret(sk) });
    audit('lead_keys.created', 'LeadKeySet', application.id, target);
    return { change: 'created', ...target, ...(publishableKey ? {} : { publishableKey: pk }), ...(secretKey ? {} : { secretKey: sk }) };
  }
  const values = {
    ...(publishableKey ? { publishableKeyHash: hashSecret(publishableKey) } : {}),
    ...(secretKey ? { secretKeyHash: hashSecret(secretKey) } : {}),
  };
  const change = assignChanges(leadKeys, values);
  if (change !== 'unchanged') audit('lead_keys.replaced', 'LeadKeySet', application.id, target);
  return { change, ...target };
}

/**
 * The application of the pair: the named one; naming none, the one whose pair of this environment the tenant already
 * has (the fixture's first application, else its oldest, as an earlier run put it: a re-run never moves the keys a
 * live storefront writes with), else the fixture's first application for a new pair.
 */
async function applicationOfPair({ em, tenant, defaultApplication }: TenantScope, named: string | undefined, environment: LeadEnvironment): Promise<Application> {
  if (named) return applicationOf(em, tenant, named);
  const first = await applicationOf(em, tenant, defaultApplication);
  if (await em.findOne(LeadKeySet, { application: first, environment })) return first;
  const oldest = await applicationOf(em, tenant, undefined);
  if (await em.findOne(LeadKeySet, { application: oldest, environment })) return oldest;
  return first;
}
