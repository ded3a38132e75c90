import { ActivityFailure, ParentClosePolicy, log, proxyActivities, startChild } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import type { RefundCall, RefundSettlement, RefundWorkflowInput } from '../../domain/payments-api/refund-outcome.ts';
import { workflowIds } from '../contract/workflow-ids.ts';
import { webhookDeliveryWorkflow } from '../webhooks/webhook-delivery.workflow.ts';

/** The refund call itself is never retried blindly: a lost answer is resolved by an inquiry first. */
const MAX_RESENDS = 2;
/** Recorded when the processor never saw the refund after every resend: nothing was refunded. */
const SYSTEM_TIMEOUT = 4285;

/** Database steps and inquiries are safe to retry; bounded, so no refund runs forever. */
const { inquireRefund, settleRefundCall, recordRefundEvent } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * A refund of an approved payment, its amount already held on the original transaction: send it to the processor
 * (asking what happened when the answer is lost, resending only what the processor never saw), record the refund
 * transaction and settle the hold exactly once, then tell the tenant's endpoints.
 */
export async function refundWorkflow(input: RefundWorkflowInput): Promise<RefundSettlement> {
  const { sendRefund } = proxyActivities<Activities>({
    startToCloseTimeout: input.processorTimeoutMs + 5_000,
    retry: { maximumAttempts: 1 },
  });

  const call = await refundAtProcessor();
  const settlement =
    call === undefined
      ? await settleRefundCall({ refundId: input.refundId, statusId: SYSTEM_TIMEOUT, message: 'The processor never received the refund' })
      : await settleRefundCall({
          refundId: input.refundId,
          call,
          statusId: call.outcome.kind === 'refunded' || call.outcome.kind === 'declined' ? call.outcome.statusId : SYSTEM_TIMEOUT,
          message: call.outcome.kind === 'declined' ? call.outcome.message : undefined,
        });
  await notify();
  return settlement;

  /** The processor's final answer, or undefined when it never saw the refund however often it was sent. */
  async function refundAtProcessor(): Promise<RefundCall | undefined> {
    for (let resend = 0; ; resend++) {
      const sent = await send();
      if (sent && sent.outcome.kind !== 'unknown') return sent;
      const asked = await inquireRefund({ refundId: input.refundId, timeoutMs: input.processorTimeoutMs });
      if (asked.outcome.kind !== 'not_found') return asked;
      // The processor never saw it: sending again under the same reference cannot refund twice.
      if (resend >= MAX_RESENDS) return undefined;
    }
  }

  async function send(): Promise<RefundCall | undefined> {
    try {
      return await sendRefund({ refundId: input.refundId, timeoutMs: input.processorTimeoutMs });
    } catch (error) {
      if (error instanceof ActivityFailure) return undefined; // worker lost or timed out: outcome unknown
      throw error;
    }
  }

  /** The transaction webhook of the refund; deliveries outlive this workflow. A webhook never undoes a refund. */
  async function notify(): Promise<void> {
    const deliveries = await recordRefundEvent({ tenantId: input.tenantId, refundId: input.refundId, occurredAt: new Date().toISOString() }).catch((error: unknown) => {
      if (!(error instanceof ActivityFailure)) throw error;
      log.error('Refund webhook not recorded', { refundId: input.refundId });
      return [];
    });
    for (const delivery of deliveries) {
      await startChild(webhookDeliveryWorkflow, {
        workflowId: workflowIds.webhookDelivery(delivery.deliveryId),
        args: [{ deliveryId: delivery.deliveryId, schedule: input.webhookSchedule, attemptTimeoutMs: input.webhookTimeoutMs }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    }
  }
}
