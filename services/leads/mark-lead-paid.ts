import type { EntityManager } from '@mikro-orm/postgresql';
import { findLeadPaidBy, markLeadPaidIfUnpaid, type PaidLeadMatch } from '../../data/queries/leads.ts';
import type { LeadPayment } from '../../domain/leads/lead.ts';
import { leadJson } from '../../domain/leads/lead-json.ts';
import { recordWebhookDeliveries, type RecordedDelivery } from '../webhooks/dispatch.ts';

/**
 * A successful payment makes the matching lead `paid` (spec 3.2) and records its `customer_lead.paid` deliveries,
 * in one transaction. Only the first payment of a session wins; a later one changes nothing and emits nothing.
 * A retry after a commit whose answer was lost finds the lead paid by this same transaction and returns the same
 * deliveries (their ids derive from the lead), so nothing is recorded or sent twice. `waitForLock: false`: a lead row
 * held by another transaction fails the marking at once (see `markLeadPaidIfUnpaid`).
 */
export async function markLeadPaid(em: EntityManager, match: PaidLeadMatch, payment: LeadPayment, options: { waitForLock: boolean } = { waitForLock: true }): Promise<RecordedDelivery[]> {
  return em.transactional(async (tx) => {
    const lead =
      (await markLeadPaidIfUnpaid(tx, match, payment, options)) ?? (await findLeadPaidBy(tx, { tenantId: match.tenantId, sessionId: match.sessionId, transactionId: payment.transactionId }));
    if (!lead) return [];
    return recordWebhookDeliveries(tx, {
      tenantId: match.tenantId,
      event: { type: 'customer_lead.paid', timestamp: (lead.paidAt ?? payment.paidAt).toISOString(), data: leadJson(lead) },
      // A lead becomes paid once: this key makes every recording of it the same deliveries.
      eventKey: `customer_lead.paid/lead-${lead.id}`,
    });
  });
}
