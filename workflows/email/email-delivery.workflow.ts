import { ActivityFailure, ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import type { PendingEmail } from '../../domain/email/email-record.ts';
import { WORKER_LOSS_NOTICED_AFTER } from '../contract/call-timeouts.ts';

export interface EmailDeliveryInput {
  /** The e-mail's id for a single send, the batch's id for a batch. */
  readonly deliveryId: string;
  readonly emailIds: readonly string[];
  /** Seconds to wait before each attempt; its length is the number of attempts (the first is usually 0). */
  readonly retrySchedule: readonly number[];
}

export interface EmailDeliveryResult {
  readonly sent: number;
  readonly failed: number;
}

const { deliverEmails } = proxyActivities<Activities>({
  // One attempt renders and sends up to a batch over the SMTP pool; SMTP refusals are outcomes, not activity failures.
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
  retry: { maximumAttempts: 5, initialInterval: '1 second', backoffCoefficient: 2 },
});

const { failQueuedEmails } = proxyActivities<Activities>({
  // One bounded statement; retried longer than deliverEmails because it is what keeps e-mails from staying queued.
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Why the activity gave up, for the e-mails' failure reason: its own message, not Temporal's wrapping. */
function reasonOf(error: ActivityFailure): string {
  const cause = error.cause;
  const message = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : error.message;
  return `Delivery stopped: ${message}`;
}

/**
 * Delivers accepted e-mails (one, or a whole batch) over SMTP: each attempt sends every e-mail still queued;
 * those the server deferred (4xx, no answer), for every recipient or only some, wait for the next attempt on
 * the schedule, which sends to the deferred recipients only; a refusal (5xx) fails the e-mail (or that
 * recipient) at once. After the last attempt nothing stays queued: what is still deferred is given up. When
 * the delivery itself cannot go on (its activity failed for good), the e-mails still queued are failed with
 * the reason: none stays queued forever.
 */
export async function emailDeliveryWorkflow(input: EmailDeliveryInput): Promise<EmailDeliveryResult> {
  let pending: readonly PendingEmail[] = input.emailIds.map((id) => ({ id }));
  let sent = 0;
  let failed = 0;
  try {
    for (let attempt = 0; attempt < input.retrySchedule.length && pending.length > 0; attempt++) {
      const waitSeconds = input.retrySchedule[attempt]!;
      if (waitSeconds > 0) await sleep(waitSeconds * 1000);
      const outcome = await deliverEmails({ deliveryId: input.deliveryId, emails: pending, lastAttempt: attempt === input.retrySchedule.length - 1 });
      sent += outcome.sent;
      failed += outcome.failed;
      pending = outcome.deferred;
    }
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    // Every e-mail of the delivery, not only `pending`: the failed attempt may have been the first.
    failed += await failQueuedEmails({ deliveryId: input.deliveryId, emailIds: input.emailIds, reason: reasonOf(error) });
  }
  return { sent, failed };
}
