import type { Client } from '@temporalio/client';
import type { RefundRunner } from '../../domain/payments-api/refund-outcome.ts';
import { withinDeadline } from './call-deadline.ts';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';
import { TenantIdAttribute } from '../../workflows/contract/search-attributes.ts';
import { TypedSearchAttributes } from '@temporalio/common';
import type { refundWorkflow } from '../../workflows/refund/refund.workflow.ts';

/**
 * Runs refunds as Temporal workflows, one per refund id (never run twice under it), and waits for the settlement
 * for at most `answerTimeoutMs`: a slower refund goes on and the caller sees it `pending`.
 */
export function temporalRefundRunner(options: { client: Client; taskQueue: string; answerTimeoutMs: number; callTimeoutMs?: number }): RefundRunner {
  const { client } = options;
  return {
    async run(input) {
      const start = () => client.workflow.start<typeof refundWorkflow>('refundWorkflow', {
        workflowId: workflowIds.refund(input.tenantId, input.refundId),
        taskQueue: options.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        // A failed run (a database step refused for days) may be started again by a retry with the same key: the claim
        // and the processor's deduplication on the refund id make a second run safe. A completed run is never repeated.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        typedSearchAttributes: new TypedSearchAttributes([{ key: TenantIdAttribute, value: String(input.tenantId) }]),
      });
      const handle = await withinDeadline(client, options.callTimeoutMs, start);
      const signal = AbortSignal.timeout(options.answerTimeoutMs);
      try {
        return await client.withAbortSignal(signal, () => handle.result());
      } catch (error) {
        if (signal.aborted) return undefined;
        throw error;
      }
    },
  };
}
