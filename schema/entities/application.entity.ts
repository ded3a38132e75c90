import { defineEntity, p } from '@mikro-orm/core';
import { LEAD_ENVIRONMENTS } from '../../domain/leads/lead-keys.ts';
import { Tenant } from './tenant.entity.ts';

/**
 * One storefront of a tenant (a checkout site or app). Products belong to one; lead keys and the origins a
 * browser may write leads from are per application, so two storefronts of a tenant never share a key.
 */
const ApplicationSchema = defineEntity({
  name: 'Application',
  tableName: 'applications',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    /** Stable provisioning key (fixture identity), e.g. `shop`; a tenant provisioned without any gets `default`. */
    slug: p.string().length(64),
    name: p.string().length(200),
    /** Origins (`scheme://host[:port]`) whose pages may write leads with the publishable key; exact match only. */
    leadAllowedOrigins: p.array().default([]),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['tenant', 'slug'] }],
  // The CORS preflight carries no key: it asks whether any application allows the origin.
  indexes: [{ name: 'applications_lead_allowed_origins_index', expression: 'create index "applications_lead_allowed_origins_index" on "applications" using gin ("lead_allowed_origins")' }],
});
export class Application extends ApplicationSchema.class {}
ApplicationSchema.setClass(Application);

/**
 * The customer-lead key pair of one application and environment (spec 5.3): publishable for browsers, secret for
 * servers; only their SHA-256 is stored. Both hashes live in one row, so regenerating replaces them in one statement.
 */
const LeadKeySetSchema = defineEntity({
  name: 'LeadKeySet',
  tableName: 'lead_key_sets',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    application: () => p.manyToOne(Application).deleteRule('cascade'),
    environment: p.enum(() => [...LEAD_ENVIRONMENTS]),
    publishableKeyHash: p.string().length(64).unique(),
    secretKeyHash: p.string().length(64).unique(),
    /** When this pair was generated (a regeneration resets it). */
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ['application', 'environment'] }],
});
export class LeadKeySet extends LeadKeySetSchema.class {}
LeadKeySetSchema.setClass(LeadKeySet);
