import { createAuthorizationActivities, type AuthorizationActivityDeps } from './payments/authorization.activities.ts';
import { createPaymentOrderActivities, type PaymentOrderActivityDeps } from './payments/payment-order.activities.ts';
import { createTransactionEventActivities } from './payments/transaction-events.activities.ts';
import { createLeadActivities } from './leads/lead-paid.activities.ts';
import { createWebhookDeliveryActivities, type WebhookActivityDeps } from './webhooks/webhook-delivery.activities.ts';
import { createRetentionActivities, type RetentionActivityDeps } from './maintenance/retention.activities.ts';

export type ActivityDeps = WebhookActivityDeps & PaymentOrderActivityDeps & AuthorizationActivityDeps & RetentionActivityDeps;

/** Every activity of the worker, built from its dependencies (no module-level connections). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWebhookDeliveryActivities(deps),
    ...createPaymentOrderActivities(deps),
    ...createAuthorizationActivities(deps),
    ...createTransactionEventActivities(deps),
    ...createLeadActivities(deps),
    ...createRetentionActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
