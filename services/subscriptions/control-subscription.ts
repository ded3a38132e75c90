import type { EntityManager } from '@mikro-orm/postgresql';
import { setTimeout as delay } from 'node:timers/promises';
import pWaitFor from 'p-wait-for';
import { cancelSubscription, findTenantSubscription, nextBillingPeriodOf, type SubscriptionView } from '../../data/queries/rebills.ts';
import type { Logger } from '../../domain/logger.ts';
import { PaymentApiError } from '../../domain/payments-api/errors.ts';
import type { SubscriptionAction, SubscriptionController } from '../../domain/subscriptions/subscription-controller.ts';
import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';
import { recordWebhookDeliveries, type RecordedDelivery } from '../webhooks/dispatch.ts';

const SETTLE_WAIT_MS = 5_000;
/**
 * A subscription's billing workflow starts right after the answer of the payment that created it (the card kept
 * first), so an action sent at once may find none yet: it is sent again for this long before "not running" is
 * believed.
 */
const BILLING_START_WAIT_MS = 2_000;
const BILLING_START_POLL_MS = 100;

/** Whether the subscription shows the action's effect. */
const done: Record<SubscriptionAction, (s: SubscriptionView) => boolean> = {
  cancel: (s) => s.state === 'cancelled',
  pause: (s) => s.pausedAt !== null || s.state === 'cancelled',
  resume: (s) => s.pausedAt === null,
};

export async function findSubscriptionOf(em: EntityManager, tenantId: number, subscriptionId: number): Promise<SubscriptionView> {
  const found = await findTenantSubscription(em, tenantId, subscriptionId);
  if (!found) throw new PaymentApiError('invalid_request_error', 'resource_missing', `No such subscription: '${subscriptionId}'`, { param: 'id' });
  return found;
}

/**
 * Cancel, pause or resume: sent to the subscription's billing workflow, which alone changes its billing. A pause or
 * resume billing took in its turn is answered with the subscription as it then is; one billing holds (a rebill in
 * flight finishes first), and a cancel, are answered once the change shows (briefly waited for, else told as
 * `pendingAction`: a cancel may still show `active` and takes effect right after the charge). The action is sent even
 * when the row already shows the change: the row follows the workflow, so it can show a pause the workflow is undoing
 * (a resume not yet written) or miss one it holds (a pause that waits for a charge to finish); the handlers are
 * idempotent and the last action billing takes wins. A subscription no workflow bills (created before recurring
 * billing ran) can only be cancelled, directly. A cancelled subscription changes no more.
 */
export interface SubscriptionControlDeps {
  readonly em: EntityManager;
  readonly controller: SubscriptionController;
  /** Starts the `subscription.cancelled` deliveries of a cancel made directly (no billing workflow to tell the tenant). */
  readonly deliveries: DeliveryStarter;
  readonly logger: Logger;
}

/**
 * The subscription after an action, and the action itself while it is accepted but not in effect yet (`pendingAction`):
 * its billing workflow holds it until the rebill in flight ends (a cancel then ends the subscription, a pause holds the
 * next charge). An answer kept under an Idempotency-Key says so for good, where the bare status would say `active`.
 */
export type ControlledSubscription = SubscriptionView & { readonly pendingAction: SubscriptionAction | null };

export async function controlSubscription(
  deps: SubscriptionControlDeps,
  input: { tenantId: number; subscriptionId: number; action: SubscriptionAction },
): Promise<ControlledSubscription> {
  const current = await findSubscriptionOf(deps.em, input.tenantId, input.subscriptionId);
  if (input.action === 'cancel' && current.state === 'cancelled') return { ...current, pendingAction: null };
  if (current.state === 'cancelled' || current.state === 'pending') throw notActive(input.subscriptionId, current.state);
  const sent = await sendToBilling(deps.controller, input);
  if (sent === 'applied') {
    const now = await findSubscriptionOf(deps.em, input.tenantId, input.subscriptionId);
    // A cancel taken after it ended the subscription: told as the cancel, as for one sent after it.
    if (now.state === 'cancelled') throw notActive(input.subscriptionId, 'cancelled');
    return { ...now, pendingAction: null };
  }
  if (sent === 'not_running') {
    if (input.action !== 'cancel') {
      // A cancel that overtook this action ended its billing: told as the cancel, not as a subscription never billed.
      if ((await findSubscriptionOf(deps.em, input.tenantId, input.subscriptionId)).state === 'cancelled') throw notActive(input.subscriptionId, 'cancelled');
      throw new PaymentApiError('invalid_request_error', 'subscription_not_billed', `Subscription ${input.subscriptionId} has no running billing to ${input.action}`, { param: 'id' });
    }
    await cancelDirectly(deps, input.tenantId, current);
  }
  let latest = current;
  await pWaitFor(
    async () => {
      latest = (await findTenantSubscription(deps.em, input.tenantId, input.subscriptionId)) ?? latest;
      return done[input.action](latest);
    },
    { interval: 50, timeout: { milliseconds: SETTLE_WAIT_MS, fallback: () => undefined } },
  );
  // Cancelled meanwhile (a cancel sent at the same time won): a pause or resume took no effect, as one sent after it.
  if (input.action !== 'cancel' && latest.state === 'cancelled') throw notActive(input.subscriptionId, 'cancelled');
  return { ...latest, pendingAction: done[input.action](latest) ? null : input.action };
}

const notActive = (subscriptionId: number, state: string) =>
  new PaymentApiError('invalid_request_error', 'subscription_not_active', `Subscription ${subscriptionId} is ${state}`, { param: 'id' });

/** Sends the action to the billing workflow, waiting briefly for one that is still being started. */
async function sendToBilling(controller: SubscriptionController, input: { tenantId: number; subscriptionId: number; action: SubscriptionAction }) {
  const deadline = Date.now() + BILLING_START_WAIT_MS;
  for (;;) {
    const sent = await controller.send(input);
    if (sent !== 'not_running' || Date.now() >= deadline) return sent;
    await delay(BILLING_START_POLL_MS);
  }
}

const DIRECT_CANCEL_REASON = 'cancelled_by_merchant';

/**
 * Cancels a subscription no workflow bills and tells the tenant, as its billing workflow would have: the
 * `subscription.cancelled` event is recorded with the cancel (one transaction) under the workflow's own event key,
 * so a billing workflow that starts after all (its checkout's start was late) and ends on the cancelled row records
 * the same deliveries and sends nothing twice. A start that fails is logged with its delivery id.
 */
async function cancelDirectly(deps: SubscriptionControlDeps, tenantId: number, subscription: SubscriptionView): Promise<void> {
  const deliveries = await deps.em.transactional(async (tx): Promise<readonly RecordedDelivery[]> => {
    if (!(await cancelSubscription(tx, { subscriptionId: subscription.id, reason: DIRECT_CANCEL_REASON }))) return [];
    // The period the next charge would have paid, as the billing workflow reports it.
    const period = await nextBillingPeriodOf(tx, subscription.id);
    return recordWebhookDeliveries(tx, {
      tenantId,
      eventKey: `subscription/${subscription.id}/cancelled`,
      event: { type: 'subscription.cancelled', timestamp: new Date().toISOString(), data: { subscriptionId: subscription.id, reason: DIRECT_CANCEL_REASON, period } },
    });
  });
  for (const delivery of deliveries) {
    await deps.deliveries.startDelivery(delivery).catch((error: unknown) => {
      deps.logger.error({ deliveryId: delivery.deliveryId, error: error instanceof Error ? error.name : typeof error }, 'subscription.cancelled delivery not started');
    });
  }
}
