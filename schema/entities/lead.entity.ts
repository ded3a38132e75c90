import { defineEntity, p } from '@mikro-orm/core';
import { LEAD_STATUSES, type LeadScan } from '../../domain/leads/lead.ts';
import { LEAD_ENVIRONMENTS } from '../../domain/leads/lead-keys.ts';
import { Application } from './application.entity.ts';
import { Tenant } from './tenant.entity.ts';

/** Every lead list reads a tenant's leads newest-updated first; each filter has an index ending that way. */
const byUpdated = (name: string, columns: string, where = '') =>
  ({ name, expression: `create index "${name}" on "customer_leads" ("tenant_id", ${columns}"updated_at" desc, "id" desc)${where}` }) as const;

/**
 * A checkout journey (spec 2.4): one per tenant and `session_id`, written by browsers and servers with the
 * application's lead keys, marked `paid` by the first matching successful payment. Written and read through
 * `data/queries/leads.ts` (one upsert, one conditional update); the entity describes the table.
 */
const CustomerLeadSchema = defineEntity({
  name: 'CustomerLead',
  tableName: 'customer_leads',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    application: () => p.manyToOne(Application).deleteRule('cascade'),
    environment: p.enum(() => [...LEAD_ENVIRONMENTS]),
    sessionId: p.string().length(255),
    email: p.string().length(320),
    firstName: p.string().length(200).nullable(),
    lastName: p.string().length(200).nullable(),
    phone: p.string().length(50).nullable(),
    scans: p.json<LeadScan[]>().default('[]'),
    /** Decoded `pending_data_b64` (a JSON object). */
    pendingData: p.json<Record<string, unknown>>().nullable(),
    /** Every `cfa_*` and `d2d_*` field by name; string values. */
    trackingFields: p.json<Record<string, string>>().default('{}'),
    status: p.enum(() => [...LEAD_STATUSES]).default('lead'),
    transactionId: p.string().length(100).nullable(),
    orderId: p.integer().nullable(),
    amount: p.decimal('string').precision(14).scale(2).nullable(),
    currency: p.string().length(3).nullable(),
    subscriptionId: p.integer().nullable(),
    paidAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  // A constraint, not a check in code: parallel writes of one session meet in `on conflict`.
  uniques: [{ properties: ['tenant', 'sessionId'] }],
  indexes: [
    byUpdated('customer_leads_tenant_updated_index', ''),
    // A lead key's page: its environment's leads only, without passing the other's.
    byUpdated('customer_leads_tenant_environment_updated_index', '"environment", '),
    // Whatever the e-mail's case: the filter compares lower(email).
    byUpdated('customer_leads_tenant_lower_email_updated_index', 'lower("email"), '),
    byUpdated('customer_leads_tenant_status_updated_index', '"status", '),
    // Partial: most leads have neither, and a filter on one can never find a lead without it.
    byUpdated('customer_leads_tenant_transaction_paid_index', '"transaction_id", ', ' where "transaction_id" is not null'),
    byUpdated('customer_leads_tenant_subscription_paid_index', '"subscription_id", ', ' where "subscription_id" is not null'),
  ],
});
export class CustomerLead extends CustomerLeadSchema.class {}
CustomerLeadSchema.setClass(CustomerLead);
