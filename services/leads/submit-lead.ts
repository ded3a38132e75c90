import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlExecutor } from '../../data/sql-executor.ts';
import type { LeadKeyPrincipal } from '../../data/queries/lead-keys.ts';
import { upsertLead, type UpsertedLead } from '../../data/queries/leads.ts';
import { DomainError } from '../../domain/errors.ts';
import { parseLeadWrite } from '../../domain/leads/lead-input.ts';
import type { Logger } from '../../domain/logger.ts';
import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';
import { markLeadPaidByEarlierPayment } from './mark-lead-paid.ts';

export interface LeadWriteDeps {
  /** The lead's upsert: one statement on the pool. */
  readonly writes: SqlExecutor;
  /** A new entity manager, for an unpaid lead's look for its session's payment. */
  readonly em: () => EntityManager;
  readonly deliveries: DeliveryStarter;
  readonly logger: Logger;
}

/**
 * How long after a session's charge a browser's first write of its lead still makes the lead paid: a write that
 * arrived late, or the page's own write right after the payment. The publishable key is public and a session id may
 * be guessed, so past it a browser write cannot attach its contact details to an old payment and have them sent as
 * `customer_lead.paid`. The server's secret key is not bound by it.
 */
const BROWSER_LATE_LEAD_WINDOW_SECONDS = 15 * 60;

/**
 * Creates or updates the lead of the body's `session_id` for the key's tenant, recording the key's application and
 * environment. A session whose lead was written with another application's or environment's key is not changed.
 * A lead whose session's payment already succeeded (written first after it; by a browser, within
 * `BROWSER_LATE_LEAD_WINDOW_SECONDS` of the charge) is paid at once, and its `customer_lead.paid` sent. A browser's write is
 * answered with the lead as its upsert left it, not as the payment's marking then made it (`lead` on creation, spec
 * 2.4), so a first write from a browser does not say that its session has paid; the secret key's answer shows the lead
 * paid. An update answers the lead's status as it is, `paid` included, from either key (spec 3.2).
 */
export async function submitLead(deps: LeadWriteDeps, principal: LeadKeyPrincipal, body: unknown): Promise<UpsertedLead> {
  const lead = parseLeadWrite(body);
  const upserted = await upsertLead(deps.writes, { id: randomUUID(), tenantId: principal.tenantId, applicationId: principal.applicationId, environment: principal.environment, lead });
  if (!upserted) throw new DomainError('forbidden', 'This session_id belongs to a lead of another application or environment', { field: 'session_id' });
  // Paid already (its payment marked it): nothing to look for. A lead still unpaid looks every time it is written, so a
  // write whose look failed (a 500 after the insert) finds its payment when sent again.
  if (upserted.status === 'paid') return upserted;

  const fromBrowser = principal.kind === 'publishable';
  const { paid, deliveries } = await markLeadPaidByEarlierPayment(
    deps.em(),
    { tenantId: principal.tenantId, applicationId: principal.applicationId, environment: principal.environment, sessionId: upserted.sessionId },
    fromBrowser ? { chargedWithinSeconds: BROWSER_LATE_LEAD_WINDOW_SECONDS } : {},
  );
  for (const delivery of deliveries) {
    // Recorded with the lead paid, and started without the write waiting for it: a checkout page's write must not stall
    // on Temporal. A start that fails is logged with its id; the unstarted-deliveries sweep starts it later.
    void deps.deliveries.startDelivery(delivery).catch((error: unknown) => {
      deps.logger.error({ deliveryId: delivery.deliveryId, error: error instanceof Error ? error.name : typeof error }, 'customer_lead.paid delivery not started');
    });
  }
  return paid && !fromBrowser ? { ...upserted, status: 'paid', updatedAt: paid.updatedAt } : upserted;
}
