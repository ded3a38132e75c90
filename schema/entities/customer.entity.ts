import { defineEntity, p } from '@mikro-orm/core';
import { Tenant } from './tenant.entity.ts';

/** A paying customer of a tenant, identified by e-mail within the tenant. */
const CustomerSchema = defineEntity({
  name: 'Customer',
  tableName: 'customers',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    email: p.string().length(320),
    firstName: p.string().length(100).nullable(),
    lastName: p.string().length(100).nullable(),
    phone: p.string().length(40).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['tenant', 'email'] }],
});
export class Customer extends CustomerSchema.class {}
CustomerSchema.setClass(Customer);

/** Campaigns and traffic sources are resolved by name, or created on first use (spec 2.1). */
function namedTenantRecord<const N extends string, const T extends string>(name: N, tableName: T) {
  return defineEntity({
    name,
    tableName,
    properties: {
      id: p.integer().primary().autoincrement(),
      tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
      name: p.string().length(200),
      createdAt: p.datetime().onCreate(() => new Date()),
    },
    uniques: [{ properties: ['tenant', 'name'] }],
  });
}

const CampaignSchema = namedTenantRecord('Campaign', 'campaigns');
export class Campaign extends CampaignSchema.class {}
CampaignSchema.setClass(Campaign);

const AffiliateSchema = namedTenantRecord('Affiliate', 'affiliates');
export class Affiliate extends AffiliateSchema.class {}
AffiliateSchema.setClass(Affiliate);
