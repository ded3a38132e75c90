import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
import { claimRedelivery, findDeliveryStanding } from '../../data/queries/webhook-deliveries.ts';
import { DomainError } from '../../domain/errors.ts';
import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';

/**
 * Sends a failed delivery again, under the same `webhook-id` (a receiver that did process it deduplicates), on the
 * retry schedule, its attempts numbered after the earlier ones. The claim, its audit entry and the start commit
 * together: a start Temporal refuses leaves the delivery failed as it was, and of requests at once one sends it and the
 * others are refused (409) while it is pending.
 */
export async function redeliverWebhook(deps: { em: EntityManager; starter: DeliveryStarter }, request: { tenantId: number; deliveryId: string; actor: string }): Promise<void> {
  await deps.em.transactional(async (tx) => {
    const claimed = await claimRedelivery(tx, request);
    if (!claimed) throw await refusalOf(tx, request);
    const { deliveryId, tenantId, endpointId, eventType, redelivery, attemptsBefore } = claimed;
    await recordAuditEntry(tx, { tenantId, actor: request.actor, action: 'webhook_delivery.redelivered', entityType: 'WebhookDelivery', entityId: deliveryId, changes: { redelivery, attemptsBefore } });
    await deps.starter.startDelivery({ deliveryId, tenantId, endpointId, eventType, redelivery: { number: redelivery, attemptsBefore } }).catch(() => {
      throw new DomainError('unavailable', 'The delivery could not be started; nothing changed: try again');
    });
  });
}

async function refusalOf(em: EntityManager, request: { tenantId: number; deliveryId: string }): Promise<DomainError> {
  const standing = await findDeliveryStanding(em, request);
  if (!standing) return new DomainError('not_found', 'Webhook delivery not found', { field: 'deliveryId' });
  if (standing.state === 'pending' || standing.state === 'delivered') {
    return new DomainError('conflict', `Only a failed delivery can be sent again; this one is ${standing.state}`, { field: 'deliveryId' });
  }
  return new DomainError('conflict', 'The delivery’s endpoint is disabled: enable it first', { field: 'deliveryId' });
}
