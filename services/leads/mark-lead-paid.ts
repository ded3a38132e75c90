import type { EntityManager } from '@mikro-orm/postgresql';
import { findFirstPaymentOfSession, findLeadPaidBy, markLeadPaidIfUnpaid, type PaidLeadMatch } from '../../data/queries/leads.ts';
import type { LeadPayment, LeadRecord } from '../../domain/leads/lead.ts';
import type { LeadEnvironment } from '../../domain/leads/lead-keys.ts';
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
  return (await markAndTell(em, match, payment, options)).deliveries;
}

/**
 * A lead first written after its checkout session's payment succeeded (the browser's write came late, or from the
 * page after the payment) becomes paid now, with that payment's identifiers, as if it had been written first.
 * Asked by every write of an unpaid lead, once its upsert has committed: a payment marks its lead only after its approval has committed, so
 * whichever of the two comes second sees the other, and the conditional update lets one of them mark it.
 * `chargedWithinSeconds`: only a payment charged at most that long ago pays the lead (a browser's write: see `submitLead`).
 */
export async function markLeadPaidByEarlierPayment(
  em: EntityManager,
  lead: { tenantId: number; applicationId: number; environment: LeadEnvironment; sessionId: string },
  options: { chargedWithinSeconds?: number } = {},
): Promise<{ paid?: LeadRecord; deliveries: RecordedDelivery[] }> {
  const earlier = await findFirstPaymentOfSession(em, lead);
  if (!earlier || (options.chargedWithinSeconds !== undefined && earlier.chargedSecondsAgo > options.chargedWithinSeconds)) return { deliveries: [] };
  return markAndTell(em, earlier.match, { ...earlier.payment, paidAt: new Date() }, { waitForLock: true }).then(({ lead: paid, deliveries }) => ({ paid, deliveries }));
}

function markAndTell(em: EntityManager, match: PaidLeadMatch, payment: LeadPayment, options: { waitForLock: boolean }): Promise<{ lead?: LeadRecord; deliveries: RecordedDelivery[] }> {
  return em.transactional(async (tx) => {
    const lead =
      (await markLeadPaidIfUnpaid(tx, match, payment, options)) ?? (await findLeadPaidBy(tx, { tenantId: match.tenantId, sessionId: match.sessionId, transactionId: payment.transactionId }));
    if (!lead) return { deliveries: [] };
    const deliveries = await recordWebhookDeliveries(tx, {
      tenantId: match.tenantId,
      event: { type: 'customer_lead.paid', timestamp: (lead.paidAt ?? payment.paidAt).toISOString(), data: leadJson(lead) },
      // A lead becomes paid once: this key makes every recording of it the same deliveries.
      eventKey: `customer_lead.paid/lead-${lead.id}`,
    });
    return { lead, deliveries };
  });
}
