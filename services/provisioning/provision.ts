import { OptimisticLockError, UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../domain/errors.ts';
import { lockTenantsToProvision } from '../../data/queries/provisioning.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { provisionApiKeys, type ProvisionedApiKey } from './api-keys.ts';
import { syncBlocklist } from './blocklist.ts';
import type { ChangeKind } from './changes.ts';
import type { ProvisioningFixture, TenantFixture } from './fixture.schema.ts';
import { provisionLeadKeys, type ProvisionedLeadKeys } from './lead-keys.ts';
import { provisionMerchantAccounts } from './merchant-accounts.ts';
import { provisionProducts } from './products.ts';
import { syncSenderDomains } from './sender-domains.ts';
import { upsertTenant } from './tenant.ts';
import { auditFor, type TenantScope } from './tenant-scope.ts';
import { provisionWebhookEndpoints, type ProvisionedWebhookEndpoint } from './webhook-endpoints.ts';

/** What provisioning did; secrets appear only when this run created them (they are never readable again). */
export interface TenantProvisioningResult {
  slug: string;
  id: number;
  clientId: string;
  change: ChangeKind;
  emailTenantKey: string;
  apiKeys: ProvisionedApiKey[];
  products: { slug: string; id: number; change: ChangeKind }[];
  merchantAccounts: { mid: string; id: number; change: ChangeKind }[];
  leadKeys?: ProvisionedLeadKeys;
  webhookEndpoints: ProvisionedWebhookEndpoint[];
}

export interface ProvisioningDeps {
  readonly em: EntityManager;
  readonly secretBox: SecretBox;
  /** Recorded on every audit entry. */
  readonly actor: string;
  /** Keyed fingerprint of a card number (blocklisted cards are stored only this way). */
  readonly fingerprintCard: (pan: string) => string;
}

/**
 * Applies a declarative fixture in one transaction: records are matched by their stable keys
 * (tenant slug, product slug, MID, endpoint slug, key name); running it twice changes nothing.
 */
export async function provision(deps: ProvisioningDeps, fixture: ProvisioningFixture): Promise<TenantProvisioningResult[]> {
  try {
    return await deps.em.transactional(async (em) => {
      await lockTenantsToProvision(em, fixture.tenants.map((tenant) => tenant.slug));
      const results: TenantProvisioningResult[] = [];
      for (const tenantFixture of fixture.tenants) results.push(await provisionTenant({ ...deps, em }, tenantFixture));
      return results;
    });
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw takenElsewhere(error);
    // A record it read was changed before its update (an admin's edit of a merchant account, whose version it checks).
    if (error instanceof OptimisticLockError) {
      throw new DomainError('conflict', 'A record of the fixture changed while it was being provisioned (an admin update); nothing was provisioned: run it again');
    }
    throw error;
  }
}

/** The fixture field a unique constraint guards, for the constraints a fixture can meet. */
const FIELD_OF_CONSTRAINT: Readonly<Record<string, string>> = {
  tenants_email_tenant_key_unique: 'email.tenantKey',
  api_keys_key_hash_unique: 'apiKeys.value',
  applications_tenant_id_slug_unique: 'applications.slug',
  merchant_accounts_mid_unique: 'merchantAccounts.mid',
  lead_key_sets_publishable_key_hash_unique: 'leads',
  lead_key_sets_secret_key_hash_unique: 'leads',
  sender_domains_tenant_id_domain_unique: 'email.senderDomains',
  products_tenant_id_slug_unique: 'products.slug',
  webhook_endpoints_tenant_id_slug_unique: 'webhookEndpoints.slug',
};

/**
 * A value the fixture gives that another record already holds (another tenant's key or MID, a slug twice in the
 * fixture): nothing was written (the transaction rolled back). The answer names the field, never the value: it may
 * be another tenant's secret.
 */
function takenElsewhere(error: UniqueConstraintViolationException): DomainError {
  const constraint = (error as { constraint?: unknown }).constraint;
  const field = typeof constraint === 'string' ? FIELD_OF_CONSTRAINT[constraint] : undefined;
  return new DomainError('conflict', `${field ?? 'A value of the fixture'} is already taken (by another record, or twice in this fixture); nothing was provisioned`, field ? { field } : {});
}

/** One tenant and everything it owns, in the order later steps depend on (the tenant first). */
async function provisionTenant(deps: ProvisioningDeps, fixture: TenantFixture): Promise<TenantProvisioningResult> {
  const { em } = deps;
  const { tenant, change, values } = await upsertTenant(em, fixture);
  const scope: TenantScope = { em, tenant, audit: auditFor(em, tenant, deps.actor), defaultApplication: fixture.applications?.[0]?.slug };
  if (change !== 'unchanged') scope.audit(`tenant.${change}`, 'Tenant', tenant.id, values);

  const result: TenantProvisioningResult = {
    slug: tenant.slug,
    id: tenant.id,
    clientId: tenant.clientId,
    change,
    emailTenantKey: tenant.emailTenantKey,
    apiKeys: await provisionApiKeys(scope, fixture.apiKeys ?? []),
    products: await provisionProducts(scope, fixture.products ?? []),
    merchantAccounts: await provisionMerchantAccounts(scope, deps.secretBox, fixture.merchantAccounts ?? []),
    webhookEndpoints: [],
  };
  if (fixture.leads) result.leadKeys = await provisionLeadKeys(scope, fixture.leads);
  if (fixture.email) await syncSenderDomains(scope, fixture.email.senderDomains);
  result.webhookEndpoints = await provisionWebhookEndpoints(scope, deps.secretBox, fixture.webhookEndpoints ?? []);
  if (fixture.blocklist) await syncBlocklist(scope, fixture.blocklist, deps.fingerprintCard);

  await em.flush();
  return result;
}
