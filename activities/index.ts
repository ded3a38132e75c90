import { createAuthorizationActivities, type AuthorizationActivityDeps } from './payments/authorization.activities.ts';
import { createPaymentOrderActivities, type PaymentOrderActivityDeps } from './payments/payment-order.activities.ts';
import { createTransactionEventActivities } from './payments/transaction-events.activities.ts';
import { createFirstAttemptActivities } from './payments/first-attempt.activities.ts';
import { createPaymentOutcomeActivities } from './payments/payment-outcome.activities.ts';
import { createLeadActivities } from './leads/lead-paid.activities.ts';
import { createWebhookDeliveryActivities, type WebhookActivityDeps } from './webhooks/webhook-delivery.activities.ts';
import { createRetentionActivities, type RetentionActivityDeps } from './maintenance/retention.activities.ts';
import { createRefundActivities } from './refunds/refund.activities.ts';
import { createAuthorizationHoldActivities } from './payments-api/authorization-hold.activities.ts';
import { createSubscriptionActivities } from './subscriptions/subscription.activities.ts';
import { createUncertainRebillActivities } from './subscriptions/uncertain-rebill.activities.ts';
import { createFloorActivities } from './floor/floor.activities.ts';
import { createEmailDeliveryActivities, type EmailActivityDeps } from './email/email-delivery.activities.ts';

export type ActivityDeps = WebhookActivityDeps & PaymentOrderActivityDeps & AuthorizationActivityDeps & RetentionActivityDeps & EmailActivityDeps;

/** Every activity of the worker, built from its dependencies (no module-level connections). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWebhookDeliveryActivities(deps),
    ...createPaymentOrderActivities(deps),
    ...createAuthorizationActivities(deps),
    ...createFirstAttemptActivities(deps),
    ...createTransactionEventActivities(deps),
    ...createPaymentOutcomeActivities(deps),
    ...createLeadActivities(deps),
    ...createRetentionActivities(deps),
    ...createRefundActivities(deps),
    ...createAuthorizationHoldActivities(deps),
    ...createSubscriptionActivities(deps),
    ...createUncertainRebillActivities(deps),
    ...createEmailDeliveryActivities(deps),
    ...createFloorActivities(),
  };
}

export type Activities = ReturnType<typeof createActivities>;
