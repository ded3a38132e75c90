import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, WorkflowUpdateStage, type Client, type WorkflowHandle } from '@temporalio/client';
import { DomainError } from '../../domain/errors.ts';
import type { SentAction, SubscriptionController } from '../../domain/subscriptions/subscription-controller.ts';
import { withinDeadline } from './call-deadline.ts';
import { isUpdateRefusedForFailingTask } from './outages.ts';
import { billingActionUpdate, cancelSubscriptionSignal, pauseSubscriptionSignal, resumeSubscriptionSignal, type BillingAction } from '../../workflows/contract/subscription-messages.ts';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';

/**
 * Sends an action to the running subscription workflow (its current run, whatever continue-as-new made of it): a
 * cancel as a signal (the subscription shows it once any rebill in flight is over), a pause or resume as an update,
 * answered once billing has recorded what it left, in the order it took concurrent ones.
 */
export function temporalSubscriptionController(options: { client: Client; callTimeoutMs?: number; answerWaitMs?: number }): SubscriptionController {
  const { client, callTimeoutMs, answerWaitMs = DEFAULT_ANSWER_WAIT_MS } = options;
  const bounded = <T>(call: () => Promise<T>) => withinDeadline(client, callTimeoutMs, call);

  const cancel = async (handle: WorkflowHandle): Promise<SentAction> => {
    await bounded(() => handle.signal(cancelSubscriptionSignal, { reason: 'cancelled_by_merchant' }));
    return 'accepted';
  };

  /**
   * The update, taken by billing within the call's deadline (no worker taking it is a 503: it may still be taken
   * later), then answered within `answerWaitMs`: billing that took it but is slow to record it (its row locked, the
   * database slow) is `accepted`, and the subscription is then watched for it as for a held action.
   */
  const pauseOrResume = async (handle: WorkflowHandle, action: BillingAction): Promise<SentAction> => {
    try {
      const update = await bounded(() => handle.startUpdate(billingActionUpdate, { args: [action], waitForStage: WorkflowUpdateStage.ACCEPTED }));
      const outcome = await withinDeadline(client, answerWaitMs, () => update.result()).catch((error: unknown) => {
        if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'taken' as const;
        throw error;
      });
      return outcome === 'applied' ? 'applied' : 'accepted';
    } catch (error) {
      // Refused: a worker of before the updates runs billing (a deploy under way). Its signal does the same.
      if (!(error instanceof WorkflowUpdateFailedError)) throw error;
      await bounded(() => handle.signal(action === 'pause' ? pauseSubscriptionSignal : resumeSubscriptionSignal));
      return 'accepted';
    }
  };

  return {
    async send({ tenantId, subscriptionId, action }) {
      const handle = client.workflow.getHandle(workflowIds.subscription(tenantId, subscriptionId));
      try {
        return action === 'cancel' ? await cancel(handle) : await pauseOrResume(handle, action);
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return 'not_running';
        // No worker took it in time (or its task keeps failing on a stalled one), or Temporal itself said nothing: it
        // may still take effect once a worker does.
        if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isUpdateRefusedForFailingTask(error)) {
          throw new DomainError('unavailable', `Billing did not take the ${action} in time (no worker took it, or Temporal did not answer); it may still take effect. Send it again, with the same Idempotency-Key, to get its outcome`, {
            retryAfterSeconds: 5,
          });
        }
        throw error;
      }
    },
  };
}

/** How long a pause or resume billing took is waited for once taken, before the subscription is watched for it instead. */
const DEFAULT_ANSWER_WAIT_MS = 3_000;
