import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
import { claimRedelivery, findDeliveryStanding, type ClaimedRedelivery } from '../../data/queries/webhook-deliveries.ts';
import { DomainError } from '../../domain/errors.ts';
import type { Logger } from '../../domain/logger.ts';
import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';
import { MAX_REDELIVERIES } from '../../domain/webhooks/redelivery.ts';

/**
 * Sends a failed delivery again, under the same `webhook-id` (a receiver that did process it deduplicates), as a run
 * of its own on the retry schedule, its attempts numbered after the earlier ones. The claim commits with its audit
 * entry, then the run is started, as every delivery is: one the gateway could not start (Temporal away) is started by
 * the unstarted-deliveries sweep, so an accepted redelivery is never lost. Of requests at once, one is accepted and the
 * others are refused (409) while it is pending.
 */
export async function redeliverWebhook(
  deps: { em: EntityManager; starter: DeliveryStarter; logger: Logger },
  request: { tenantId: number; deliveryId: string; actor: string },
): Promise<ClaimedRedelivery> {
  const claimed = await deps.em.transactional(async (tx) => {
    const claim = await claimRedelivery(tx, { ...request, maxRedeliveries: MAX_REDELIVERIES });
    if (!claim) throw await refusalOf(tx, request);
    await recordAuditEntry(tx, {
      tenantId: claim.tenantId,
      actor: request.actor,
      action: 'webhook_delivery.redelivered',
      entityType: 'WebhookDelivery',
      entityId: claim.deliveryId,
      changes: { redelivery: claim.redelivery, attemptsBefore: claim.attemptsBefore },
    });
    return claim;
  });
  const { deliveryId, tenantId, endpointId, eventType, redelivery, attemptsBefore } = claimed;
  await deps.starter.startDelivery({ deliveryId, tenantId, endpointId, eventType, redelivery: { number: redelivery, attemptsBefore } }).catch((error: unknown) => {
    deps.logger.warn({ deliveryId, redelivery, err: error }, 'redelivery not started; the unstarted-deliveries sweep starts it');
  });
  return claimed;
}

async function refusalOf(em: EntityManager, request: { tenantId: number; deliveryId: string }): Promise<DomainError> {
  const standing = await findDeliveryStanding(em, request);
  if (!standing) return new DomainError('not_found', 'Webhook delivery not found', { field: 'deliveryId' });
  if (standing.state === 'pending' || standing.state === 'delivered') {
    return new DomainError('conflict', `Only a failed delivery can be sent again; this one is ${standing.state}`, { field: 'deliveryId' });
  }
  if (standing.redeliveries >= MAX_REDELIVERIES) return new DomainError('conflict', `This delivery was sent again ${MAX_REDELIVERIES} times already`, { field: 'deliveryId' });
  return new DomainError('conflict', 'The delivery’s endpoint is disabled: enable it first', { field: 'deliveryId' });
}
