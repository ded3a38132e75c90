import type { LeadRecord } from './lead.ts';

/**
 * A stored lead as the REST API and the `customer_lead.paid` webhook show it: snake_case like the write body,
 * every CFA/D2D field at the top level under its own name (`cfa_device` always, the one spec 2.4 names), dates in ISO 8601, the amount as an exact decimal
 * string; never the tenant.
 */
export function leadJson(lead: LeadRecord): Record<string, unknown> {
  return {
    id: lead.id,
    session_id: lead.sessionId,
    email: lead.email,
    first_name: lead.firstName,
    last_name: lead.lastName,
    phone: lead.phone,
    scans: lead.scans,
    pending_data: lead.pendingData,
    ...trackingFieldsOf(lead),
    status: lead.status,
    application_id: lead.applicationId,
    environment: lead.environment,
    transaction_id: lead.transactionId,
    order_id: lead.orderId,
    amount: lead.amount,
    currency: lead.currency,
    subscription_id: lead.subscriptionId,
    paid_at: lead.paidAt?.toISOString() ?? null,
    created_at: lead.createdAt.toISOString(),
    updated_at: lead.updatedAt.toISOString(),
  };
}

/**
 * A lead's CFA and D2D fields as answered (REST, GraphQL, the webhook): `cfa_device`, the one spec 2.4 names, always
 * there as the other optional fields are (null until written), then every other one written, by name.
 */
export function trackingFieldsOf(lead: Pick<LeadRecord, 'trackingFields'>): Record<string, string | null> {
  return { cfa_device: null, ...lead.trackingFields };
}

