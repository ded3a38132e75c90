import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS } from '../contract/call-timeouts.ts';
import { waitBeforeAttempt } from '../../domain/webhooks/retry-policy.ts';

export interface WebhookDeliveryInput {
  readonly deliveryId: string;
  /** Seconds to wait before each attempt; its length is the number of attempts. */
  readonly schedule: readonly number[];
  readonly attemptTimeoutMs: number;
  /** A redelivery: the attempts the delivery made before, so this run's are numbered after them. */
  readonly attemptsBefore?: number;
}

export type WebhookDeliveryResult = 'delivered' | 'failed' | 'endpoint_disabled';

const { attemptWebhookDelivery, concludeWebhookDelivery } = proxyActivities<Activities>({
  // An attempt is one HTTP call plus two small writes; HTTP failures are outcomes, not retries. What is retried is the
  // database being away (a restart, a failover): every 5 seconds at most, for up to a day, so an outage of a minute
  // neither loses the event nor leaves a delivered one `pending` for good (5 tries in 15 seconds did). A statement
  // PostgreSQL refuses, or a delivery that no longer exists, fails at once (non-retryable).
  startToCloseTimeout: OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS,
  scheduleToCloseTimeout: '1 day',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 seconds' },
});

/**
 * Delivers one signed event to one endpoint: attempts on the retry schedule until a 2xx, honouring
 * Retry-After; a 410 disables the endpoint; after the last attempt the delivery is failed.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  let retryAfterSeconds: number | undefined;
  for (let attempt = 0; attempt < input.schedule.length; attempt++) {
    const waitSeconds = waitBeforeAttempt(input.schedule, attempt, retryAfterSeconds);
    if (waitSeconds > 0) await sleep(waitSeconds * 1000);

    const outcome = await attemptWebhookDelivery({ deliveryId: input.deliveryId, attemptNumber: (input.attemptsBefore ?? 0) + attempt + 1, timeoutMs: input.attemptTimeoutMs });
    switch (outcome.kind) {
      case 'delivered':
        await concludeWebhookDelivery({ deliveryId: input.deliveryId, conclusion: 'delivered' });
        return 'delivered';
      case 'gone':
        await concludeWebhookDelivery({ deliveryId: input.deliveryId, conclusion: 'endpoint_disabled', disableEndpoint: true });
        return 'endpoint_disabled';
      case 'endpoint_disabled':
        await concludeWebhookDelivery({ deliveryId: input.deliveryId, conclusion: 'endpoint_disabled' });
        return 'endpoint_disabled';
      case 'failed':
        retryAfterSeconds = outcome.retryAfterSeconds;
    }
  }
  await concludeWebhookDelivery({ deliveryId: input.deliveryId, conclusion: 'failed' });
  return 'failed';
}
