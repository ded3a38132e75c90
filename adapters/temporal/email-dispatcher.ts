import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { EmailDispatcher } from '../../domain/email/email-dispatcher.ts';
import { withinDeadline } from './call-deadline.ts';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';
import { TenantIdAttribute } from '../../workflows/contract/search-attributes.ts';
import type { emailDeliveryWorkflow } from '../../workflows/email/email-delivery.workflow.ts';

/**
 * Starts `emailDeliveryWorkflow` for stored e-mails: one workflow per single send, one per batch. The workflow id
 * comes from the delivery id, so starting a delivery again (a request taking over an abandoned claim) is a no-op.
 */
export function temporalEmailDispatcher(options: { client: Client; taskQueue: string; retrySchedule: readonly number[]; callTimeoutMs?: number }): EmailDispatcher {
  return {
    async dispatch(delivery) {
      try {
        await withinDeadline(options.client, options.callTimeoutMs, () =>
          options.client.workflow.start<typeof emailDeliveryWorkflow>('emailDeliveryWorkflow', {
            taskQueue: options.taskQueue,
            workflowId: delivery.kind === 'batch' ? workflowIds.emailBatch(delivery.tenantId, delivery.deliveryId) : workflowIds.email(delivery.tenantId, delivery.deliveryId),
            args: [{ deliveryId: delivery.deliveryId, emailIds: delivery.emailIds, retrySchedule: options.retrySchedule }],
            typedSearchAttributes: new TypedSearchAttributes([{ key: TenantIdAttribute, value: String(delivery.tenantId) }]),
          }),
        );
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
  };
}
