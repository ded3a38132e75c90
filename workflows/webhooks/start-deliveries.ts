import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { workflowIds } from '../contract/workflow-ids.ts';
import { webhookDeliveryWorkflow } from './webhook-delivery.workflow.ts';
import type { Redelivery } from '../../domain/webhooks/redelivery.ts';

export interface DeliverySettings {
  /** Seconds to wait before each attempt. */
  readonly schedule: readonly number[];
  readonly attemptTimeoutMs: number;
}

/**
 * One durable delivery workflow per recorded delivery, started from a workflow; they outlive it. A delivery is
 * started once: its workflow id is the delivery's id, and a start that finds that id taken (the delivery is under
 * way, or done and still within the namespace's retention) leaves it be. Recording an event twice (the same event key) yields the same deliveries, and
 * starting them again must neither fail the calling workflow (a payment, a subscription's billing) nor send a
 * delivered event a second time.
 *
 * Replay: the already-started case used to fail the calling workflow, so no running workflow's history holds it;
 * catching it changes no history that is still being written.
 */
export async function startWebhookDeliveries(deliveries: readonly { readonly deliveryId: string; readonly redelivery?: Redelivery }[], settings: DeliverySettings): Promise<void> {
  for (const { deliveryId, redelivery } of deliveries) {
    try {
      await startChild(webhookDeliveryWorkflow, {
        // A redelivery (started by the sweep when its gateway could not) runs under its own id, as the gateway names it.
        workflowId: redelivery ? workflowIds.webhookRedelivery(deliveryId, redelivery.number) : workflowIds.webhookDelivery(deliveryId),
        args: [
          {
            deliveryId,
            schedule: settings.schedule,
            attemptTimeoutMs: settings.attemptTimeoutMs,
            ...(redelivery ? { run: redelivery.number, attemptsBefore: redelivery.attemptsBefore } : {}),
          },
        ],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}
