import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookDelivery, WebhookEndpoint } from '../../schema/entities/index.ts';
import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';
import { serializeEvent, type WebhookEvent } from '../../domain/webhooks/events.ts';

export interface RecordedDelivery {
  readonly deliveryId: string;
  readonly tenantId: number;
  readonly endpointId: string;
  readonly eventType: string;
}

/**
 * Records one delivery per enabled endpoint of the tenant subscribed to the event type. The delivery
 * id is the Standard Webhooks `webhook-id` receivers deduplicate on.
 */
export async function recordWebhookDeliveries(
  em: EntityManager,
  input: { tenantId: number; event: WebhookEvent; endpointIds?: readonly string[] },
): Promise<RecordedDelivery[]> {
  const endpoints = await em.find(WebhookEndpoint, {
    tenant: input.tenantId,
    disabledAt: null,
    ...(input.endpointIds ? { id: { $in: [...input.endpointIds] } } : {}),
  });
  const subscribed = endpoints.filter((e) => e.eventTypes.length === 0 || e.eventTypes.includes(input.event.type));
  const body = serializeEvent(input.event);
  const deliveries = subscribed.map((endpoint) =>
    em.create(WebhookDelivery, { id: `msg_${randomUUID().replaceAll('-', '')}`, tenant: input.tenantId, endpoint, eventType: input.event.type, body }),
  );
  await em.flush();
  return deliveries.map((d) => ({ deliveryId: d.id, tenantId: input.tenantId, endpointId: d.endpoint.id, eventType: d.eventType }));
}

/** Records the deliveries of an event and starts each one durably. */
export async function dispatchWebhookEvent(
  deps: { em: EntityManager; starter: DeliveryStarter },
  input: { tenantId: number; event: WebhookEvent; endpointIds?: readonly string[] },
): Promise<string[]> {
  const deliveries = await recordWebhookDeliveries(deps.em, input);
  for (const delivery of deliveries) await deps.starter.startDelivery(delivery);
  return deliveries.map((d) => d.deliveryId);
}
