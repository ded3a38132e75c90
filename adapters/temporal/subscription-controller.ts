import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SubscriptionController } from '../../domain/subscriptions/subscription-controller.ts';
import { cancelSubscriptionSignal, pauseSubscriptionSignal, resumeSubscriptionSignal } from '../../workflows/contract/subscription-signals.ts';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';

/** Signals the running subscription workflow (its current run, whatever continue-as-new made of it). */
export function temporalSubscriptionController(options: { client: Client }): SubscriptionController {
  return {
    async signal({ tenantId, subscriptionId, action }) {
      const handle = options.client.workflow.getHandle(workflowIds.subscription(tenantId, subscriptionId));
      try {
        if (action === 'cancel') await handle.signal(cancelSubscriptionSignal, { reason: 'cancelled_by_merchant' });
        else await handle.signal(action === 'pause' ? pauseSubscriptionSignal : resumeSubscriptionSignal);
        return 'signalled';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return 'not_running';
        throw error;
      }
    },
  };
}
