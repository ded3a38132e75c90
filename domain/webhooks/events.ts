/** Every event the gateway sends; an endpoint subscribes to some of them (none named: all). */
export const WEBHOOK_EVENT_TYPES = [
  'customer_lead.paid',
  'transaction.completed',
  'transaction.updated',
  'subscription.renewed',
  'subscription.payment_failed',
  'subscription.paused',
  'subscription.resumed',
  'subscription.cancelled',
  'webhook.test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** The events of a subscription's billing. */
export type SubscriptionEventType = Extract<WebhookEventType, `subscription.${string}`>;

/** The body every webhook carries (Standard Webhooks convention). */
export interface WebhookEvent<T = Record<string, unknown>> {
  readonly type: WebhookEventType;
  readonly timestamp: string;
  readonly data: T;
}

export function serializeEvent(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}
