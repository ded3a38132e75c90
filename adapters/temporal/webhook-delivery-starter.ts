import type { Client } from '@temporalio/client';
import { TypedSearchAttributes, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';
import { withinDeadline } from './call-deadline.ts';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';
import { TenantIdAttribute, WebhookEndpointIdAttribute, WebhookEventTypeAttribute } from '../../workflows/contract/search-attributes.ts';
import type { webhookDeliveryWorkflow } from '../../workflows/webhooks/webhook-delivery.workflow.ts';

/**
 * Starts `webhookDeliveryWorkflow` with a workflow id derived from the delivery id, once: a start that finds the id
 * taken (the delivery under way, or done and still within the namespace's retention) leaves it be, as the workflows'
 * own starts do (`startWebhookDeliveries`), so an event recorded twice is never sent twice. A redelivery (a failed
 * delivery sent again on request) runs as `webhook/<id>/again-<n>`, its run number `n`.
 */
export function temporalDeliveryStarter(options: { client: Client; taskQueue: string; schedule: readonly number[]; attemptTimeoutMs: number; callTimeoutMs?: number }): DeliveryStarter {
  return {
    async startDelivery(delivery) {
      const start = () => options.client.workflow.start<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
        taskQueue: options.taskQueue,
        // A redelivery runs under an id of its own: the first is kept by its closed workflow for the retention period.
        workflowId: delivery.redelivery ? workflowIds.webhookRedelivery(delivery.deliveryId, delivery.redelivery.number) : workflowIds.webhookDelivery(delivery.deliveryId),
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        args: [
          {
            deliveryId: delivery.deliveryId,
            schedule: options.schedule,
            attemptTimeoutMs: options.attemptTimeoutMs,
            ...(delivery.redelivery ? { run: delivery.redelivery.number, attemptsBefore: delivery.redelivery.attemptsBefore } : {}),
          },
        ],
        typedSearchAttributes: new TypedSearchAttributes([
          { key: TenantIdAttribute, value: String(delivery.tenantId) },
          { key: WebhookEndpointIdAttribute, value: delivery.endpointId },
          { key: WebhookEventTypeAttribute, value: delivery.eventType },
        ]),
      });
      await withinDeadline(options.client, options.callTimeoutMs, start).catch((error: unknown) => {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      });
    },
  };
}
