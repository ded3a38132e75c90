import { ParentClosePolicy, condition, continueAsNew, executeChild, log, proxyActivities, setHandler, startChild, allHandlersFinished } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import type { SubscriptionPlan } from '../../domain/catalog/product.ts';
import type { PaymentSettings } from '../../domain/payments/payment-input.ts';
import { nextDunningStep, periodSeconds } from '../../domain/subscriptions/dunning.ts';
import { cancelSubscriptionSignal, pauseSubscriptionSignal, resumeSubscriptionSignal, subscriptionProgressQuery } from '../contract/subscription-signals.ts';
import { workflowIds } from '../contract/workflow-ids.ts';
import { paymentWorkflow } from '../payment/payment.workflow.ts';
import { webhookDeliveryWorkflow } from '../webhooks/webhook-delivery.workflow.ts';

/** Database steps: short, idempotent, retried for minutes but not forever. */
const { prepareRebill, recordRebill, endSubscription, markSubscriptionPaused, recordSubscriptionEvent } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '30 seconds' },
});

export interface SubscriptionWorkflowInput {
  readonly tenantId: number;
  readonly subscriptionId: number;
  readonly plan: SubscriptionPlan;
  readonly settings: PaymentSettings;
  /** The billing period the next charge pays (1 is the first after the initial payment). */
  readonly period: number;
  /** Dunning retries already made for this period. */
  readonly retries: number;
  /** Seconds until the next charge (a period, the trial, or a dunning delay). */
  readonly waitSeconds: number;
  readonly paused: boolean;
}

export interface SubscriptionEnd {
  readonly reason: string;
  readonly period: number;
}

/**
 * A subscription's recurring billing (Temporal's subscription pattern): wait for the period (or the dunning
 * delay), charge the recurring amount through the payment workflow (the same MID selection, caps and cascade,
 * the stored card without CVV as a merchant-initiated transaction), record the outcome and tell the tenant, then
 * continue as new for the next period so the history stays small. A hard decline, an exhausted dunning schedule or
 * a cancel ends it; pause holds the next charge until resumed. A cancel during a charge lets that charge finish.
 */
export async function subscriptionWorkflow(input: SubscriptionWorkflowInput): Promise<SubscriptionEnd> {
  let paused = input.paused;
  let cancelReason: string | undefined;
  setHandler(cancelSubscriptionSignal, ({ reason }) => void (cancelReason ??= reason ?? 'cancelled_by_merchant'));
  setHandler(pauseSubscriptionSignal, () => void (paused = true));
  setHandler(resumeSubscriptionSignal, () => void (paused = false));
  setHandler(subscriptionProgressQuery, () => ({ period: input.period, retries: input.retries, paused, cancelRequested: cancelReason !== undefined }));

  const dueAt = Date.now() + input.waitSeconds * 1000;
  for (;;) {
    const remaining = dueAt - Date.now();
    if (remaining > 0 && !paused) await condition(() => cancelReason !== undefined || paused, remaining);
    if (cancelReason !== undefined) return end(cancelReason);
    if (paused) {
      await markSubscriptionPaused({ subscriptionId: input.subscriptionId, paused: true });
      await notify('subscription.paused', `paused-${input.period}-${input.retries}`, {});
      await condition(() => !paused || cancelReason !== undefined);
      if (cancelReason !== undefined) return end(cancelReason);
      await markSubscriptionPaused({ subscriptionId: input.subscriptionId, paused: false });
      await notify('subscription.resumed', `resumed-${input.period}-${input.retries}`, {});
      continue;
    }
    if (Date.now() >= dueAt) break;
  }

  const rebill = await prepareRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: input.retries });
  if (rebill.kind === 'none') return end(rebill.reason === 'cancelled' ? 'cancelled' : 'no_card_on_file');
  const result = await executeChild(paymentWorkflow, {
    workflowId: workflowIds.payment(input.tenantId, rebill.orderId),
    // A rebill in flight finishes even if this subscription is ended meanwhile: it is never left half-done.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    args: [
      {
        tenantId: input.tenantId,
        productId: rebill.productId,
        submitOrderId: rebill.orderId,
        amount: rebill.amount,
        currency: rebill.currency,
        email: rebill.email,
        sealedCard: rebill.sealedCard,
        card: rebill.card,
        order: { mobileWalletA: false },
        cascade: true,
        threeDSecure: { enabled: false, cancelOnFail: true },
        subscriptionPlan: null,
        resultContext: { email: rebill.email, amount: rebill.amount, bin: rebill.card.bin, last4: rebill.card.last4 },
        settings: input.settings,
      },
    ],
  });

  const now = Date.now();
  const event = { period: input.period, attempt: input.retries, orderId: rebill.orderId, transactionId: result.transactionId, statusId: result.statusId, amount: rebill.amount, currency: rebill.currency };
  if (result.chargeSuccess) {
    const nextBillingAt = new Date(now + periodSeconds(input.plan) * 1000).toISOString();
    await recordRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: input.retries, paid: true, statusId: result.statusId, nextBillingAt, graceUntil: null });
    await notify('subscription.renewed', `renewed-${input.period}`, { ...event, nextBillingAt });
    return next({ ...input, period: input.period + 1, retries: 0, waitSeconds: periodSeconds(input.plan) });
  }
  const step = nextDunningStep(result.statusId, input.retries, input.plan);
  if (step.kind === 'stop') {
    await recordRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: input.retries, paid: false, statusId: result.statusId, nextBillingAt: new Date(now).toISOString(), graceUntil: null });
    await notify('subscription.payment_failed', `failed-${input.period}-${input.retries}`, { ...event, retryAt: null });
    return end(step.reason);
  }
  const retryAt = new Date(now + step.afterSeconds * 1000).toISOString();
  await recordRebill({ subscriptionId: input.subscriptionId, period: input.period, attempt: input.retries, paid: false, statusId: result.statusId, nextBillingAt: retryAt, graceUntil: retryAt });
  await notify('subscription.payment_failed', `failed-${input.period}-${input.retries}`, { ...event, retryAt });
  return next({ ...input, retries: input.retries + 1, waitSeconds: step.afterSeconds });

  /** The next period or retry in a fresh run; a cancel that arrived during the charge is honoured first. */
  async function next(nextInput: SubscriptionWorkflowInput): Promise<SubscriptionEnd> {
    await condition(allHandlersFinished);
    if (cancelReason !== undefined) return end(cancelReason);
    return continueAsNew<typeof subscriptionWorkflow>({ ...nextInput, paused });
  }

  async function end(reason: string): Promise<SubscriptionEnd> {
    await endSubscription({ subscriptionId: input.subscriptionId, reason });
    await notify('subscription.cancelled', 'cancelled', { reason, period: input.period });
    log.info('Subscription ended', { subscriptionId: input.subscriptionId, reason });
    return { reason, period: input.period };
  }

  /** One webhook per event key of this subscription; deliveries outlive this run. A webhook never changes billing. */
  async function notify(type: string, key: string, data: Record<string, unknown>): Promise<void> {
    const deliveries = await recordSubscriptionEvent({
      tenantId: input.tenantId,
      type,
      eventKey: `subscription/${input.subscriptionId}/${key}`,
      occurredAt: new Date().toISOString(),
      data: { subscriptionId: input.subscriptionId, ...data },
    });
    for (const delivery of deliveries) {
      await startChild(webhookDeliveryWorkflow, {
        workflowId: workflowIds.webhookDelivery(delivery.deliveryId),
        args: [{ deliveryId: delivery.deliveryId, schedule: input.settings.webhookSchedule, attemptTimeoutMs: input.settings.webhookTimeoutMs }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    }
  }
}
