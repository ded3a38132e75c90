import { ActivityFailure, log, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS, WORKER_LOSS_NOTICED_AFTER } from '../contract/call-timeouts.ts';
import { waitBeforeAttempt } from '../../domain/webhooks/retry-policy.ts';

export interface WebhookDeliveryInput {
  readonly deliveryId: string;
  /** Seconds to wait before each attempt; its length is the number of attempts. */
  readonly schedule: readonly number[];
  readonly attemptTimeoutMs: number;
  /**
   * A redelivery: its run's number (absent: the first run, 0), which the delivery must still be at for this run's
   * steps to count, and the attempts made before it, which this run's are numbered after.
   */
  readonly run?: number;
  readonly attemptsBefore?: number;
}

/** `superseded`: the delivery was sent again as a later run meanwhile (a late step of this run changes nothing). */
export type WebhookDeliveryResult = 'delivered' | 'failed' | 'endpoint_disabled' | 'superseded';

const { attemptWebhookDelivery, concludeWebhookDelivery } = proxyActivities<Activities>({
  // An attempt is one HTTP call plus two small writes; HTTP failures are outcomes, not retries. What is retried is the
  // database being away (a restart, a failover): every 5 seconds at most, for up to a day, so an outage of a minute
  // neither loses the event nor leaves a delivered one `pending` for good (5 tries in 15 seconds did). A statement
  // PostgreSQL refuses, or a delivery that no longer exists, fails at once (non-retryable).
  startToCloseTimeout: OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS,
  scheduleToCloseTimeout: '1 day',
  heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 seconds' },
});

/**
 * Runs before this patch failed with an attempt that failed for good (a signing secret that cannot be opened, the
 * database away for a day), leaving their delivery `pending`; they replay so. From it on, the run ends its delivery
 * `failed` first (best effort), so it can be sent again once mended (`redeliverWebhook`).
 */
const FAILING_RUNS_CONCLUDE = 'webhook-runs-conclude-when-failing';

/**
 * Delivers one signed event to one endpoint: attempts on the retry schedule until a 2xx, honouring
 * Retry-After; a 410 disables the endpoint; after the last attempt the delivery is failed.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  // Which delivery and run each step acts for (a first run's steps name no run, as they always did).
  const run = { deliveryId: input.deliveryId, ...(input.run !== undefined ? { run: input.run } : {}) };
  let retryAfterSeconds: number | undefined;
  for (let attempt = 0; attempt < input.schedule.length; attempt++) {
    const waitSeconds = waitBeforeAttempt(input.schedule, attempt, retryAfterSeconds);
    if (waitSeconds > 0) await sleep(waitSeconds * 1000);

    const outcome = await attemptWebhookDelivery({ ...run, attemptNumber: (input.attemptsBefore ?? 0) + attempt + 1, timeoutMs: input.attemptTimeoutMs }).catch(async (error: unknown) => {
      // An attempt that failed for good ends the delivery failed (best effort); a conclusion failing is not one.
      if (error instanceof ActivityFailure && patched(FAILING_RUNS_CONCLUDE)) {
        log.error('Webhook delivery run failed for good; the delivery is ended failed', { deliveryId: input.deliveryId, reason: error.cause?.message ?? error.message });
        await concludeWebhookDelivery({ ...run, conclusion: 'failed' }).catch(() => undefined);
      }
      throw error;
    });
    switch (outcome.kind) {
      case 'delivered':
        await concludeWebhookDelivery({ ...run, conclusion: 'delivered' });
        return 'delivered';
      case 'gone':
        await concludeWebhookDelivery({ ...run, conclusion: 'endpoint_disabled', disableEndpoint: true });
        return 'endpoint_disabled';
      case 'endpoint_disabled':
        await concludeWebhookDelivery({ ...run, conclusion: 'endpoint_disabled' });
        return 'endpoint_disabled';
      case 'superseded':
        return 'superseded';
      case 'failed':
        retryAfterSeconds = outcome.retryAfterSeconds;
    }
  }
  await concludeWebhookDelivery({ ...run, conclusion: 'failed' });
  return 'failed';
}
