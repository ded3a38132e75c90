import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { log, ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import type { PaymentSettings } from '../../domain/payments/payment-input.ts';
import { workflowIds } from '../contract/workflow-ids.ts';
import { subscriptionWorkflow } from '../subscription/subscription.workflow.ts';

const { findOverdueBilling } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '5 seconds' },
});

/**
 * How long past its due date a charge must be before the sweep looks at its subscription. A billing workflow records
 * the next date when it records a charge, so only one that stopped, or is stalled on a step, leaves it behind.
 */
const OVERDUE_AFTER_SECONDS = 3600;
/** Subscriptions looked at per run; the next run takes the rest. */
const BATCH = 100;

/**
 * One sweep (run hourly by the `maintenance/stalled-billing` schedule): a subscription whose billing workflow
 * stopped (it failed after a step kept failing for a week, or an operator terminated it) would never be charged again
 * while it shows as active. This starts its billing again, under its usual workflow id, at the period and try its
 * next charge is, due now. A billing workflow still running (stalled on a step, or charging) is never started twice:
 * the id admits a new run only after a failed, terminated or timed-out one. A subscription whose last try has no
 * recorded outcome is not charged again: it is logged for an operator, who settles that charge first.
 */
export async function stalledBillingWorkflow(settings: PaymentSettings): Promise<{ restarted: number[]; forOperator: number[] }> {
  const { restart, forOperator } = await findOverdueBilling({ overdueSeconds: OVERDUE_AFTER_SECONDS, limit: BATCH });
  const restarted: number[] = [];
  for (const billing of restart) {
    try {
      await startChild(subscriptionWorkflow, {
        workflowId: workflowIds.subscription(billing.tenantId, billing.subscriptionId),
        args: [{ tenantId: billing.tenantId, subscriptionId: billing.subscriptionId, plan: billing.plan, settings, period: billing.period, retries: billing.retries, waitSeconds: 0, paused: false }],
        // The billing outlives this sweep.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
      log.warn('Billing started again for a subscription whose billing workflow had stopped', { ...billing, plan: undefined });
      restarted.push(billing.subscriptionId);
    } catch (error) {
      // Running (stalled on a step it goes on trying, or charging): it is left to itself.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
  for (const billing of forOperator) log.error('Subscription billing stopped and cannot start again by itself', { ...billing });
  return { restarted, forOperator: forOperator.map((billing) => billing.subscriptionId) };
}
