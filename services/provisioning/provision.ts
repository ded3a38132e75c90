import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { generateSecret, generateWebhookSecret, hashSecret, type SecretBox } from '../../domain/crypto/secret-box.ts';
import {
  ApiKey,
  AuditEntry,
  LeadKeySet,
  MerchantAccount,
  MerchantAccountCurrency,
  Product,
  SenderDomain,
  Tenant,
  WebhookEndpoint,
  BlocklistEntry,
  type BlocklistKind,
} from '../../schema/entities/index.ts';
import { CARD_NETWORKS } from '../../domain/catalog/product.ts';
import { DomainError } from '../../domain/errors.ts';
import { toFractionString, toMoneyString } from '../../domain/money.ts';
import type { ProvisioningFixture, TenantFixture } from './fixture.schema.ts';
import type { MerchantAccountProvisionInput } from '../../schema/inputs/merchant-account.input.ts';

export type ChangeKind = 'created' | 'updated' | 'unchanged';

/** What provisioning did; secrets appear only when this run created them (they are never readable again). */
export interface TenantProvisioningResult {
  slug: string;
  id: number;
  clientId: string;
  change: ChangeKind;
  emailTenantKey: string;
  apiKeys: { name: string; id: number; change: ChangeKind; key?: string }[];
  products: { slug: string; id: number; change: ChangeKind }[];
  merchantAccounts: { mid: string; id: number; change: ChangeKind }[];
  leadKeys?: { change: ChangeKind; publishableKey?: string; secretKey?: string };
  webhookEndpoints: { slug: string; id: string; change: ChangeKind; secret?: string }[];
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
  return deps.em.transactional(async (em) => {
    const results: TenantProvisioningResult[] = [];
    for (const tenantFixture of fixture.tenants) results.push(await provisionTenant({ ...deps, em }, tenantFixture));
    return results;
  });
}

async function provisionTenant(deps: ProvisioningDeps, fixture: TenantFixture): Promise<TenantProvisioningResult> {
  const { em } = deps;
  const audit = (tenant: Tenant | null, action: string, entityType: string, entityId: string | number, changes?: Record<string, unknown>) =>
    em.persist(em.create(AuditEntry, { tenant, actor: deps.actor, action, entityType, entityId: String(entityId), changes: changes ?? null }));

  const clash = await em.findOne(Tenant, { clientId: fixture.clientId, slug: { $ne: fixture.slug } });
  if (clash) throw new DomainError('conflict', `clientId ${fixture.clientId} already belongs to tenant ${clash.slug}`, { field: 'clientId' });

  let tenant = await em.findOne(Tenant, { slug: fixture.slug });
  const tenantValues = {
    name: fixture.name,
    clientId: fixture.clientId,
    parentCompanyName: fixture.parentCompany ?? null,
    rateLimitPerMinute: fixture.rateLimitPerMinute ?? null,
    leadAllowedOrigins: fixture.leads?.allowedOrigins ?? tenant?.leadAllowedOrigins ?? [],
    ...(fixture.email?.tenantKey ? { emailTenantKey: fixture.email.tenantKey } : {}),
  };
  let tenantChange: ChangeKind;
  if (!tenant) {
    tenant = em.create(Tenant, { slug: fixture.slug, emailTenantKey: randomUUID(), ...tenantValues });
    tenantChange = 'created';
  } else {
    tenantChange = assignChanges(tenant, tenantValues);
  }
  await em.flush();
  if (tenantChange !== 'unchanged') audit(tenant, `tenant.${tenantChange}`, 'Tenant', tenant.id, tenantValues);

  const result: TenantProvisioningResult = {
    slug: tenant.slug,
    id: tenant.id,
    clientId: tenant.clientId,
    change: tenantChange,
    emailTenantKey: tenant.emailTenantKey,
    apiKeys: [],
    products: [],
    merchantAccounts: [],
    webhookEndpoints: [],
  };

  for (const keyFixture of fixture.apiKeys ?? []) {
    let apiKey = await em.findOne(ApiKey, { tenant, name: keyFixture.name });
    const value = keyFixture.value;
    if (!apiKey) {
      const key = value ?? generateSecret('sk_api_');
      apiKey = em.create(ApiKey, { tenant, name: keyFixture.name, keyHash: hashSecret(key), displayPrefix: key.slice(0, 12) });
      await em.flush();
      audit(tenant, 'api_key.created', 'ApiKey', apiKey.id);
      result.apiKeys.push({ name: apiKey.name, id: apiKey.id, change: 'created', ...(value ? {} : { key }) });
    } else {
      const change = value ? assignChanges(apiKey, { keyHash: hashSecret(value), displayPrefix: value.slice(0, 12) }) : 'unchanged';
      if (change !== 'unchanged') audit(tenant, 'api_key.replaced', 'ApiKey', apiKey.id);
      result.apiKeys.push({ name: apiKey.name, id: apiKey.id, change });
    }
  }

  for (const productFixture of fixture.products ?? []) {
    const values = {
      name: productFixture.name,
      price: toMoneyString(productFixture.price, `products.${productFixture.slug}.price`),
      currency: productFixture.currency,
      acceptedNetworks: productFixture.acceptedNetworks ?? [...CARD_NETWORKS],
      subscriptionPlan: productFixture.subscriptionPlan
        ? {
            recurringAmount: toMoneyString(productFixture.subscriptionPlan.recurringAmount, `products.${productFixture.slug}.subscriptionPlan.recurringAmount`),
            intervalDays: productFixture.subscriptionPlan.intervalDays,
            trialDays: productFixture.subscriptionPlan.trialDays ?? 0,
            gracePeriodDays: productFixture.subscriptionPlan.gracePeriodDays ?? 0,
          }
        : null,
      cardSubmitLimit: productFixture.velocity?.cardSubmitLimit ?? 3,
      cardSubmitWindowSeconds: productFixture.velocity?.cardSubmitWindowSeconds ?? 600,
      emailSubmitLimit: productFixture.velocity?.emailSubmitLimit ?? 5,
    };
    let product = await em.findOne(Product, { tenant, slug: productFixture.slug });
    let change: ChangeKind;
    if (!product) {
      product = em.create(Product, { tenant, slug: productFixture.slug, ...values });
      change = 'created';
    } else {
      change = assignChanges(product, values);
    }
    await em.flush();
    if (change !== 'unchanged') audit(tenant, `product.${change}`, 'Product', product.id, values);
    result.products.push({ slug: product.slug, id: product.id, change });
  }

  for (const accountFixture of fixture.merchantAccounts ?? []) {
    const existing = await em.findOne(MerchantAccount, { mid: accountFixture.mid }, { populate: ['tenant'] });
    if (existing && existing.tenant.id !== tenant.id) {
      throw new DomainError('conflict', `MID ${accountFixture.mid} belongs to another tenant`, { field: 'mid' });
    }
    const { currencies, ...fields } = accountFixture;
    const values = merchantAccountValues(fields);
    let account = existing;
    let change: ChangeKind;
    if (!account) {
      account = em.create(MerchantAccount, { tenant, mid: accountFixture.mid, gateway: 'sandbox', ...values } as never);
      change = 'created';
    } else {
      change = assignChanges(account, values);
    }
    await em.flush();
    if (currencies) {
      const currencyChange = await syncCurrencies(em, deps.secretBox, account, currencies);
      if (change === 'unchanged' && currencyChange) change = 'updated';
    }
    if (change !== 'unchanged') audit(tenant, `merchant_account.${change}`, 'MerchantAccount', account.id, { ...values, currencies: currencies?.map((c) => c.currency) });
    result.merchantAccounts.push({ mid: account.mid, id: account.id, change });
  }

  if (fixture.leads) {
    const leadKeys = await em.findOne(LeadKeySet, { tenant });
    const { publishableKey, secretKey } = fixture.leads;
    if (!leadKeys) {
      const pk = publishableKey ?? generateSecret('pk_live_', 24);
      const sk = secretKey ?? generateSecret('sk_live_', 32);
      em.create(LeadKeySet, { tenant, publishableKeyHash: hashSecret(pk), secretKeyHash: hashSecret(sk) });
      audit(tenant, 'lead_keys.created', 'LeadKeySet', tenant.id);
      result.leadKeys = { change: 'created', ...(publishableKey ? {} : { publishableKey: pk }), ...(secretKey ? {} : { secretKey: sk }) };
    } else {
      const values = {
        ...(publishableKey ? { publishableKeyHash: hashSecret(publishableKey) } : {}),
        ...(secretKey ? { secretKeyHash: hashSecret(secretKey) } : {}),
      };
      const change = assignChanges(leadKeys, values);
      if (change !== 'unchanged') audit(tenant, 'lead_keys.replaced', 'LeadKeySet', tenant.id);
      result.leadKeys = { change };
    }
  }

  if (fixture.email) {
    const wanted = new Set(fixture.email.senderDomains.map((d) => d.toLowerCase()));
    const current = await em.find(SenderDomain, { tenant });
    for (const domain of current) {
      if (!wanted.has(domain.domain)) {
        em.remove(domain);
        audit(tenant, 'sender_domain.removed', 'SenderDomain', domain.id, { domain: domain.domain });
      }
    }
    for (const domain of wanted) {
      if (!current.some((d) => d.domain === domain)) {
        em.create(SenderDomain, { tenant, domain });
        audit(tenant, 'sender_domain.added', 'SenderDomain', domain, { domain });
      }
    }
  }

  for (const endpointFixture of fixture.webhookEndpoints ?? []) {
    let endpoint = await em.findOne(WebhookEndpoint, { tenant, slug: endpointFixture.slug });
    const values = { url: endpointFixture.url, eventTypes: endpointFixture.eventTypes ?? [] };
    if (!endpoint) {
      const secret = endpointFixture.secret ?? generateWebhookSecret();
      endpoint = em.create(WebhookEndpoint, { id: randomUUID(), tenant, slug: endpointFixture.slug, ...values, secretCiphertext: deps.secretBox.seal(secret) });
      audit(tenant, 'webhook_endpoint.created', 'WebhookEndpoint', endpoint.id, values);
      result.webhookEndpoints.push({ slug: endpoint.slug, id: endpoint.id, change: 'created', ...(endpointFixture.secret ? {} : { secret }) });
      continue;
    }
    let change = assignChanges(endpoint, values);
    if (endpointFixture.secret && deps.secretBox.open(endpoint.secretCiphertext) !== endpointFixture.secret) {
      // Rotation: keep signing with the old secret too until the receiver has switched.
      endpoint.previousSecretCiphertext = endpoint.secretCiphertext;
      endpoint.secretCiphertext = deps.secretBox.seal(endpointFixture.secret);
      change = 'updated';
    }
    if (change !== 'unchanged') audit(tenant, 'webhook_endpoint.updated', 'WebhookEndpoint', endpoint.id, values);
    result.webhookEndpoints.push({ slug: endpoint.slug, id: endpoint.id, change });
  }

  if (fixture.blocklist) await syncBlocklist(em, tenant, fixture.blocklist, deps.fingerprintCard, audit);

  await em.flush();
  return result;
}

/** The tenant's blocklist becomes exactly the fixture's (a set per kind). */
async function syncBlocklist(
  em: EntityManager,
  tenant: Tenant,
  blocklist: NonNullable<TenantFixture['blocklist']>,
  fingerprintCard: (pan: string) => string,
  audit: (tenant: Tenant, action: string, entityType: string, entityId: string | number, changes?: Record<string, unknown>) => void,
): Promise<void> {
  const wanted = new Set<string>([
    ...(blocklist.emails ?? []).map((v) => `email:${v.toLowerCase()}`),
    ...(blocklist.cards ?? []).map((v) => `card:${fingerprintCard(v)}`),
    ...(blocklist.bins ?? []).map((v) => `bin:${v}`),
    ...(blocklist.binCountries ?? []).map((v) => `bin_country:${v}`),
  ]);
  const current = await em.find(BlocklistEntry, { tenant });
  for (const entry of current) {
    if (!wanted.delete(`${entry.kind}:${entry.value}`)) {
      em.remove(entry);
      audit(tenant, 'blocklist.removed', 'BlocklistEntry', entry.id, { kind: entry.kind });
    }
  }
  for (const item of wanted) {
    const [kind, ...rest] = item.split(':') as [BlocklistKind, ...string[]];
    em.create(BlocklistEntry, { tenant, kind, value: rest.join(':') });
    audit(tenant, 'blocklist.added', 'BlocklistEntry', kind, { kind });
  }
}

type AccountFields = Omit<MerchantAccountProvisionInput, 'mid' | 'currencies'>;

const MONEY_FIELDS = ['maxPrice', 'gatewayTransactionFee', 'chargebackFee', 'rdrFee', 'alertFee', 'cdrnFee', 'bankAuthFee', 'bankDeclineFee', 'bankAVSFee', 'customFee', 'customFeeApprovedOnly'] as const;
const FRACTION_FIELDS = ['reservePercentage', 'discountRatePercentage'] as const;

/** Maps API field names and formats to the entity: exact decimals as strings, dates as Date. */
export function merchantAccountValues(fields: Partial<AccountFields>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const property = key === 'dynamicDescriptorPrefix_NetworkB' ? 'dynamicDescriptorPrefixNetworkB' : key;
    if (value === null) values[property] = null;
    else if ((MONEY_FIELDS as readonly string[]).includes(key)) values[property] = toMoneyString(value as number | string, key);
    else if ((FRACTION_FIELDS as readonly string[]).includes(key)) values[property] = toFractionString(value as number | string, key);
    else if (key === 'capLimited') values[property] = new Date(value as string);
    else values[property] = value;
  }
  return values;
}

async function syncCurrencies(
  em: EntityManager,
  secretBox: SecretBox,
  account: MerchantAccount,
  currencies: NonNullable<MerchantAccountProvisionInput['currencies']>,
): Promise<boolean> {
  let changed = false;
  const current = await em.find(MerchantAccountCurrency, { merchantAccount: account });
  const wanted = new Map(currencies.map((c) => [c.currency, c]));
  for (const row of current) {
    if (!wanted.has(row.currency)) {
      em.remove(row);
      changed = true;
    }
  }
  for (const [currency, input] of wanted) {
    const credentials = JSON.stringify(input.gatewayCredentials ?? {});
    const row = current.find((r) => r.currency === currency);
    if (!row) {
      em.create(MerchantAccountCurrency, { merchantAccount: account, currency, credentialsCiphertext: secretBox.seal(credentials) });
      changed = true;
    } else if (secretBox.open(row.credentialsCiphertext) !== credentials) {
      row.credentialsCiphertext = secretBox.seal(credentials);
      changed = true;
    }
  }
  await em.flush();
  return changed;
}

/** Assigns only differing values, so an unchanged record is not written (idempotency). */
function assignChanges<T extends object>(entity: T, values: Record<string, unknown>): ChangeKind {
  let changed = false;
  for (const [key, value] of Object.entries(values)) {
    const current = (entity as Record<string, unknown>)[key];
    if (!sameValue(current, value)) {
      (entity as Record<string, unknown>)[key] = value;
      changed = true;
    }
  }
  return changed ? 'updated' : 'unchanged';
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a === b) return true;
  if (a === undefined || a === null) return b === undefined || b === null;
  // jsonb does not keep key order, so compare structurally.
  return isDeepStrictEqual(a, b);
}
