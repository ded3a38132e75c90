import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { findEnabledEndpointIds, findSubscribedEndpointIds, insertWebhookDeliveries } from '../../data/queries/webhook-deliveries.ts';
import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';
import type { Logger } from '../../domain/logger.ts';
import { serializeEvent, type WebhookEvent } from '../../domain/webhooks/events.ts';

export interface RecordedDelivery {
  readonly deliveryId: string;
  readonly tenantId: number;
  readonly endpointId: string;
  readonly eventType: string;
}

export interface EventToDeliver {
  readonly tenantId: number;
  readonly event: WebhookEvent;
  /**
   * The endpoints to send it to, named: each gets it whatever event types it subscribes to (a test event sent to one
   * endpoint). Absent: every enabled endpoint subscribed to the event's type.
   */
  readonly endpointIds?: readonly string[];
  /**
   * What makes the event one event (e.g. the payment and its outcome). Given, the delivery ids derive from it,
   * so recording the event again (a retried activity) gives the same `webhook-id`s and no second delivery.
   */
  readonly eventKey?: string;
}

/** A delivery id (`msg_` + 32 hex): derived from the event's key and the endpoint when the event has one. */
function deliveryId(input: EventToDeliver, endpointId: string): string {
  if (input.eventKey === undefined) return `msg_${randomUUID().replaceAll('-', '')}`;
  return `msg_${createHash('sha256').update(`${input.tenantId}\n${input.eventKey}\n${endpointId}`).digest('hex').slice(0, 32)}`;
}

/**
 * Records one delivery per enabled endpoint of the tenant subscribed to the event type (or named). The delivery
 * id is the Standard Webhooks `webhook-id` receivers deduplicate on.
 */
export async function recordWebhookDeliveries(em: EntityManager, input: EventToDeliver): Promise<RecordedDelivery[]> {
  const subscribed = input.endpointIds
    ? await findEnabledEndpointIds(em, { tenantId: input.tenantId, endpointIds: input.endpointIds })
    : await findSubscribedEndpointIds(em, { tenantId: input.tenantId, eventType: input.event.type });
  if (subscribed.length === 0) return [];
  const body = serializeEvent(input.event);
  const deliveries = subscribed.map((endpointId) => ({ id: deliveryId(input, endpointId), tenantId: input.tenantId, endpointId, eventType: input.event.type, body }));
  await insertWebhookDeliveries(em, deliveries);
  return deliveries.map((d) => ({ deliveryId: d.id, tenantId: d.tenantId, endpointId: d.endpointId, eventType: d.eventType }));
}

/**
 * Records the deliveries of an event and starts each one durably. A start that fails (Temporal away) is logged: the
 * delivery is recorded, and the unstarted-deliveries sweep starts it, so the caller is answered its ids all the same
 * (a caller told of a failure would send the event again).
 */
export async function dispatchWebhookEvent(deps: { em: EntityManager; starter: DeliveryStarter; logger: Logger }, input: EventToDeliver): Promise<string[]> {
  const deliveries = await recordWebhookDeliveries(deps.em, input);
  for (const delivery of deliveries) {
    await deps.starter.startDelivery(delivery).catch((error: unknown) => {
      deps.logger.warn({ deliveryId: delivery.deliveryId, err: error }, 'webhook delivery not started; the unstarted-deliveries sweep starts it');
    });
  }
  return deliveries.map((d) => d.deliveryId);
}
