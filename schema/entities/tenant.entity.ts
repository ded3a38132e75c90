import { defineEntity, p } from '@mikro-orm/core';

/**
 * A tenant is one merchant company using the gateway. `clientId` is what admin callers send in the
 * `ClientId` header (spec 5.2: the id of the parent company); `emailTenantKey` is the UUID the
 * e-mail API takes as `tenant_key` (spec 5.4).
 */
const TenantSchema = defineEntity({
  name: 'Tenant',
  tableName: 'tenants',
  properties: {
    id: p.integer().primary().autoincrement(),
    /** Stable provisioning key (fixture identity), e.g. `acme`. */
    slug: p.string().length(64).unique(),
    name: p.string().length(200),
    clientId: p.string().length(64).unique(),
    parentCompanyName: p.string().length(200).nullable(),
    /** The parent company (spec 2.6 `parentCompanyId`): its admins see this tenant's merchant accounts and transactions. */
    parentTenant: () => p.manyToOne(Tenant).nullable().deleteRule('set null').index('tenants_parent_tenant_id_index'),
    /** Requests per minute per API key; null uses RATE_LIMIT_PER_MINUTE. */
    rateLimitPerMinute: p.integer().nullable(),
    emailTenantKey: p.uuid().unique(),
    /** When its card-encryption key was last rotated: a rotation claims it first (at most one a minute). */
    cardKeyRotatedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export class Tenant extends TenantSchema.class {}
TenantSchema.setClass(Tenant);

/** A secret API key of a tenant (submit, admin, status list, mitigation). Only its SHA-256 is stored. */
const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    name: p.string().length(100),
    keyHash: p.string().length(64).unique(),
    /** First characters of the key, safe to show so an operator can tell keys apart. */
    displayPrefix: p.string().length(16),
    createdAt: p.datetime().onCreate(() => new Date()),
    revokedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['tenant', 'name'] }],
});
export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);

/** A sender domain a tenant may send e-mail from (spec 5.4). */
const SenderDomainSchema = defineEntity({
  name: 'SenderDomain',
  tableName: 'sender_domains',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    domain: p.string().length(253),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ['tenant', 'domain'] }],
});
export class SenderDomain extends SenderDomainSchema.class {}
SenderDomainSchema.setClass(SenderDomain);

/** A tenant's key pair for client-side card encryption; the private key is sealed (AES-256-GCM). */
const CardEncryptionKeySchema = defineEntity({
  name: 'CardEncryptionKey',
  tableName: 'card_encryption_keys',
  properties: {
    id: p.string().length(64).primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    publicJwk: p.json<Record<string, unknown>>(),
    privateKeyCiphertext: p.text(),
    /** The key handed to checkout pages; older keys still decrypt until removed. */
    active: p.boolean().default(true),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [
    { properties: ['tenant', 'active'] },
    {
      // One active key per tenant: every checkout page is handed the same one.
      name: 'card_encryption_keys_one_active_per_tenant',
      expression: `create unique index "card_encryption_keys_one_active_per_tenant" on "card_encryption_keys" ("tenant_id") where "active"`,
    },
  ],
});
export class CardEncryptionKey extends CardEncryptionKeySchema.class {}
CardEncryptionKeySchema.setClass(CardEncryptionKey);
