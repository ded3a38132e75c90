import { createPaymentActivities, type PaymentActivityDeps } from './payments/payment.activities.ts';
import { createTransactionEventActivities } from './payments/transaction-events.activities.ts';
import { createWebhookDeliveryActivities, type WebhookActivityDeps } from './webhooks/webhook-delivery.activities.ts';

export type ActivityDeps = WebhookActivityDeps & PaymentActivityDeps;

/** Every activity of the worker, built from its dependencies (no module-level connections). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWebhookDeliveryActivities(deps),
    ...createPaymentActivities(deps),
    ...createTransactionEventActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
