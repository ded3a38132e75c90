import { ActivityFailure, ApplicationFailure, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS, WORKER_LOSS_NOTICED_AFTER } from '../contract/call-timeouts.ts';
import { REFUND_NOT_SENDABLE, type RefundCall, type RefundSettlement, type RefundWorkflowInput } from '../../domain/payments-api/refund-outcome.ts';
import { startWebhookDeliveries } from '../webhooks/start-deliveries.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';

/** The refund call itself is never retried blindly: a lost answer is resolved by an inquiry first. */
const MAX_RESENDS = 2;
/**
 * How long a refund keeps asking a processor that does not answer its inquiry (each round is an activity with its
 * own bounded retries, then a durable pause): long enough for an outage, after which an operator decides.
 */
const INQUIRY_PATIENCE_MS = 3 * 24 * 3600_000;
/** How long the database steps (claim, settlement, review mark) keep being retried before the workflow fails. */
const DATABASE_PATIENCE_MS = 7 * 24 * 3600_000;
const FIRST_PAUSE_MS = 30_000;
const LONGEST_PAUSE_MS = 3600_000;
/** What the tenant reads on a refund whose processor answer could not be learnt. */
const UNDER_REVIEW = "The processor's answer could not be learnt; the refund is under review and its amount stays held";

/** Database steps are safe to retry; each series of attempts is bounded, and the workflow pauses between series. */
const { claimRefund, markRefundForReview, settleRefundCall, recordRefundEvent } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
/** An inquiry is a read: a short series of attempts (about 15 s), then a durable pause, rather than minutes of polling. */
const { inquireRefund } = proxyActivities<Activities>({
  startToCloseTimeout: OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS,
  heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
  retry: { maximumAttempts: 5, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '8 seconds' },
});

/** What the processor made of the refund, as far as the workflow could learn. */
type ProcessorVerdict =
  | { readonly kind: 'answered'; readonly call: RefundCall }
  /** It certainly never reached the processor (never sendable, or the processor has no trace after every resend). */
  | { readonly kind: 'never_sent'; readonly statusId: number; readonly reason: string }
  /** It may have reached the processor, whose answer cannot be learnt: the money may have moved. */
  | { readonly kind: 'unknown'; readonly reason: string };

/**
 * A refund of an approved payment, its amount already held on the original transaction: claim it (a request that
 * could not start this workflow may have withdrawn it), send it to the processor (asking what happened when the
 * answer is lost, resending only what the processor never saw), record the refund transaction and settle the hold
 * exactly once, then tell the tenant's endpoints. It never ends with the refund silently pending: an outcome it
 * cannot learn marks the refund for review (amount still held, as the money may have moved).
 */
export async function refundWorkflow(input: RefundWorkflowInput): Promise<RefundSettlement> {
  const { sendRefund } = proxyActivities<Activities>({
    startToCloseTimeout: input.processorTimeoutMs + 5_000,
    heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
    retry: { maximumAttempts: 1 },
  });

  const claim = await durably(() => claimRefund({ refundId: input.refundId }));
  if (claim !== 'claimed') return { refundId: input.refundId, state: claim === 'under_review' ? 'pending' : claim, statusId: null };

  const verdict = await refundAtProcessor();
  if (verdict.kind === 'unknown') {
    // The reason stays in the log and history: a processor's text is not for the tenant's API.
    log.error('Refund outcome unknown: kept pending and held for review', { refundId: input.refundId, reason: verdict.reason });
    await durably(() => markRefundForReview({ refundId: input.refundId, reason: UNDER_REVIEW }));
    return { refundId: input.refundId, state: 'pending', statusId: null };
  }
  const settlement =
    verdict.kind === 'never_sent'
      ? await durably(() => settleRefundCall({ refundId: input.refundId, statusId: verdict.statusId, message: verdict.reason }))
      : await durably(() =>
          settleRefundCall({
            refundId: input.refundId,
            call: verdict.call,
            statusId: verdict.call.outcome.kind === 'refunded' || verdict.call.outcome.kind === 'declined' ? verdict.call.outcome.statusId : StatusId.SYSTEM_TIMEOUT,
            message: verdict.call.outcome.kind === 'declined' ? verdict.call.outcome.message : undefined,
          }),
        );
  await notify();
  return settlement;

  async function refundAtProcessor(): Promise<ProcessorVerdict> {
    let mayHaveReached = false;
    for (let resend = 0; ; resend++) {
      const sent = await send();
      if (sent === 'not_sendable') {
        const reason = 'The refund cannot be sent: its original or its processor is gone';
        return mayHaveReached ? { kind: 'unknown', reason } : { kind: 'never_sent', statusId: StatusId.PROCESSOR_CONFIGURATION_INVALID, reason };
      }
      mayHaveReached = true;
      if (sent && sent.outcome.kind !== 'unknown') return { kind: 'answered', call: sent };
      const asked = await inquire();
      if (!('outcome' in asked)) return asked;
      if (asked.outcome.kind !== 'not_found') return { kind: 'answered', call: asked };
      // The processor never saw it: sending again under the same reference cannot refund twice.
      if (resend >= MAX_RESENDS) return { kind: 'never_sent', statusId: StatusId.SYSTEM_TIMEOUT, reason: 'The processor never received the refund' };
    }
  }

  /** One send; undefined when its outcome is unknown (no answer, worker lost), `not_sendable` when nothing left. */
  async function send(): Promise<RefundCall | undefined | 'not_sendable'> {
    try {
      return await sendRefund({ refundId: input.refundId, timeoutMs: input.processorTimeoutMs });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      return error.cause instanceof ApplicationFailure && error.cause.type === REFUND_NOT_SENDABLE ? 'not_sendable' : undefined;
    }
  }

  /**
   * The processor's record of the refund, asked again after durable pauses while it does not answer (an outage
   * must not end the refund); unknown when it refuses the inquiry for good or stays away past the patience.
   */
  async function inquire(): Promise<RefundCall | ProcessorVerdict> {
    const giveUpAt = Date.now() + INQUIRY_PATIENCE_MS;
    for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
      try {
        return await inquireRefund({ refundId: input.refundId, timeoutMs: input.processorTimeoutMs });
      } catch (error) {
        if (!(error instanceof ActivityFailure)) throw error;
        const reason = error.cause?.message ?? error.message;
        if (isPermanent(error) || Date.now() + pause > giveUpAt) return { kind: 'unknown', reason: `the refund inquiry failed: ${reason}` };
        log.warn('Refund inquiry failed; asking again later', { refundId: input.refundId, pauseMs: pause });
        await sleep(pause);
      }
    }
  }

  /**
   * A database step retried after durable pauses (PostgreSQL away longer than one activity's attempts must not
   * lose a refund the processor made); a permanent refusal, or days of failures, fails the workflow, which a
   * retry of the request with the same Idempotency-Key starts again (the processor deduplicates the resend).
   */
  async function durably<T>(step: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + DATABASE_PATIENCE_MS;
    for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
      try {
        return await step();
      } catch (error) {
        if (!(error instanceof ActivityFailure) || isPermanent(error) || Date.now() + pause > giveUpAt) throw error;
        log.warn('Refund database step failed; trying again later', { refundId: input.refundId, pauseMs: pause });
        await sleep(pause);
      }
    }
  }

  /** The transaction webhook of the refund; deliveries outlive this workflow. A webhook never undoes a refund. */
  async function notify(): Promise<void> {
    const deliveries = await recordRefundEvent({ tenantId: input.tenantId, refundId: input.refundId, occurredAt: new Date().toISOString() }).catch((error: unknown) => {
      if (!(error instanceof ActivityFailure)) throw error;
      log.error('Refund webhook not recorded', { refundId: input.refundId });
      return [];
    });
    await startWebhookDeliveries(deliveries, { schedule: input.webhookSchedule, attemptTimeoutMs: input.webhookTimeoutMs });
  }
}

/** A failure no retry fixes (thrown non-retryable by the activity). */
function isPermanent(error: ActivityFailure): boolean {
  return error.cause instanceof ApplicationFailure && error.cause.nonRetryable === true;
}
