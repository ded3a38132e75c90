import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SubscriptionController } from '../../domain/subscriptions/subscription-controller.ts';
import { withinDeadline } from './call-deadline.ts';
import { cancelSubscriptionSignal, pauseSubscriptionSignal, resumeSubscriptionSignal } from '../../workflows/contract/subscription-signals.ts';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';

/** Signals the running subscription workflow (its current run, whatever continue-as-new made of it). */
export function temporalSubscriptionController(options: { client: Client; callTimeoutMs?: number }): SubscriptionController {
  return {
    async signal({ tenantId, subscriptionId, action }) {
      const handle = options.client.workflow.getHandle(workflowIds.subscription(tenantId, subscriptionId));
      try {
        await withinDeadline(options.client, options.callTimeoutMs, () =>
          action === 'cancel' ? handle.signal(cancelSubscriptionSignal, { reason: 'cancelled_by_merchant' }) : handle.signal(action === 'pause' ? pauseSubscriptionSignal : resumeSubscriptionSignal),
        );
        return 'signalled';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return 'not_running';
        throw error;
      }
    },
  };
}
