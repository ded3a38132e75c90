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
 * Creates or updates the lead of the body's `session_id` for the key's tenant, recording the key's application and
 * environment. A session whose lead was written with another application's or environment's key is not changed.
 * A lead whose session's payment already succeeded (written first after it) is paid at once, and its
 * `customer_lead.paid` sent.
 */
export async function submitLead(deps: LeadWriteDeps, principal: LeadKeyPrincipal, body: unknown): Promise<UpsertedLead> {
  const lead = parseLeadWrite(body);
  const upserted = await upsertLead(deps.writes, { id: randomUUID(), tenantId: principal.tenantId, applicationId: principal.applicationId, environment: principal.environment, lead });
  if (!upserted) throw new DomainError('forbidden', 'This session_id belongs to a lead of another application or environment', { field: 'session_id' });
  // Paid already (its payment marked it): nothing to look for. A lead still unpaid looks every time it is written, so a
  // write whose look failed (a 500 after the insert) finds its payment when sent again.
  if (upserted.status === 'paid') return upserted;

  const { paid, deliveries } = await markLeadPaidByEarlierPayment(deps.em(), {
    tenantId: principal.tenantId,
    applicationId: principal.applicationId,
    environment: principal.environment,
    sessionId: upserted.sessionId,
  });
  for (const delivery of deliveries) {
    // Recorded with the lead paid, and started without the write waiting for it: a checkout page's write must not stall
    // on Temporal. A start that fails is logged with its id; the unstarted-deliveries sweep starts it later.
    void deps.deliveries.startDelivery(delivery).catch((error: unknown) => {
      deps.logger.error({ deliveryId: delivery.deliveryId, error: error instanceof Error ? error.name : typeof error }, 'customer_lead.paid delivery not started');
    });
  }
  return paid ? { ...upserted, status: 'paid', updatedAt: paid.updatedAt } : upserted;
}
