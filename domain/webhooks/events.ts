/** The body every webhook carries (Standard Webhooks convention). */
export interface WebhookEvent<T = Record<string, unknown>> {
  readonly type: string;
  readonly timestamp: string;
  readonly data: T;
}

export const WEBHOOK_EVENT_TYPES = ['customer_lead.paid', 'transaction.completed', 'transaction.updated', 'webhook.test'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function serializeEvent(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}
