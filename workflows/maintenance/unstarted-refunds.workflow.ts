import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import type { RefundWorkflowInput } from '../../domain/payments-api/refund-outcome.ts';
import { TenantIdAttribute } from '../contract/search-attributes.ts';
import { workflowIds } from '../contract/workflow-ids.ts';
import { refundWorkflow } from '../refund/refund.workflow.ts';

/** The refund settings a started refund workflow runs with (the gateway's, from the same configuration). */
export type UnstartedRefundSettings = Omit<RefundWorkflowInput, 'tenantId' | 'refundId'>;

const { listUnstartedRefunds } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '5 seconds' },
});

/**
 * How old an unclaimed refund must be before the sweep starts its workflow: well past the longest a gateway takes
 * between reserving a refund and starting its workflow (or withdrawing it when the start fails).
 */
const UNSTARTED_AFTER_SECONDS = 10 * 60;
/** Refunds started per run; the next run (minutes later) takes the rest. */
const BATCH = 100;

/**
 * One sweep (run every few minutes by the `maintenance/unstarted-refunds` schedule): a refund whose gateway stopped
 * between reserving it and starting its workflow would stay pending with its amount held for ever; this starts its
 * refund workflow, under the refund's usual id, as if the request had. The workflow's claim decides, as always: a
 * refund withdrawn meanwhile is left alone, and a workflow already running under that id is not started twice.
 */
export async function unstartedRefundsWorkflow(settings: UnstartedRefundSettings): Promise<{ started: string[] }> {
  const started: string[] = [];
  for (const { tenantId, refundId } of await listUnstartedRefunds({ olderThanSeconds: UNSTARTED_AFTER_SECONDS, limit: BATCH })) {
    try {
      await startChild(refundWorkflow, {
        workflowId: workflowIds.refund(tenantId, refundId),
        args: [{ tenantId, refundId, ...settings }],
        // The refund outlives this sweep; a failed earlier run may be started again, a completed one never.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        typedSearchAttributes: [{ key: TenantIdAttribute, value: String(tenantId) }],
      });
      started.push(refundId);
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
  return { started };
}
