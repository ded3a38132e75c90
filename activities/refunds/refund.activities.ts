import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ProcessorGateway, RefundOutcome } from '../../adapters/processors/processor-gateway.ts';
import {
  claimRefundForSending,
  findUnstartedRefunds,
  findRefundEvent,
  findRefundInstruction,
  recordRefundTransaction,
  requireRefundReview,
  settleRefund,
  type RefundClaim,
  type RefundInstruction,
} from '../../data/queries/refunds.ts';
import type { Logger } from '../../domain/logger.ts';
import { REFUND_NOT_SENDABLE, type RefundCall, type RefundCallOutcome, type RefundSettlement } from '../../domain/payments-api/refund-outcome.ts';
import { statusNameOf } from '../../domain/statuses/status-codes.ts';
import { recordWebhookDeliveries, type RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import { processorFailure, withPermanentFailures } from '../shared/permanent-failures.ts';
import { ApplicationFailure } from '@temporalio/common';

export interface RefundActivityDeps {
  readonly orm: MikroORM;
  readonly logger: Logger;
  readonly processors: { get(name: string): ProcessorGateway; names(): string[] };
}

/** The processor exchanges of a refund, its settlement and its webhook. */
export function createRefundActivities(deps: RefundActivityDeps) {
  const fork = (): EntityManager => deps.orm.em.fork() as EntityManager;

  async function instruction(refundId: string): Promise<{ refund: RefundInstruction; processor: ProcessorGateway }> {
    const refund = await findRefundInstruction(fork(), refundId);
    // A refund row is written before its workflow starts; without one (or without a processor id) nothing can be sent.
    if (!refund) throw ApplicationFailure.nonRetryable(`Refund ${refundId} has no refundable original`, REFUND_NOT_SENDABLE);
    let processor: ProcessorGateway;
    try {
      processor = deps.processors.get(refund.gateway);
    } catch {
      // Configuration does not change between retries: retrying only delays the refund's end.
      throw ApplicationFailure.nonRetryable(`Refund ${refundId}: processor ${refund.gateway} is not configured`, REFUND_NOT_SENDABLE);
    }
    return { refund, processor };
  }

  /** Marks the refund as going to the processor, or says why it must not be sent (see `claimRefundForSending`). */
  async function claimRefund(input: { refundId: string }): Promise<RefundClaim> {
    return claimRefundForSending(fork(), input.refundId);
  }

  /** Keeps a refund whose outcome cannot be learnt pending and held, marked for an operator. */
  async function markRefundForReview(input: { refundId: string; reason: string }): Promise<void> {
    await requireRefundReview(fork(), input);
  }

  /** Sends the refund under its own id as reference: the processor deduplicates a resend. */
  async function sendRefund(input: { refundId: string; timeoutMs: number }): Promise<RefundCall> {
    const { refund, processor } = await instruction(input.refundId);
    const result = await processor
      .refund({ reference: refund.refundId, processorTransactionId: refund.processorTransactionId, amount: refund.amount }, input.timeoutMs);
    deps.logger.info({ refundId: refund.refundId, outcome: result.outcome.kind }, 'refund sent');
    return { outcome: result.outcome, exchange: result.exchange };
  }

  /** Asks what became of a refund whose answer was lost; a processor that does not answer is asked again (retried). */
  async function inquireRefund(input: { refundId: string; timeoutMs: number }): Promise<RefundCall> {
    const { refund, processor } = await instruction(input.refundId);
    const result = await processor.inquireRefund(refund.refundId, input.timeoutMs);
    if (result.outcome === null) return { outcome: { kind: 'not_found' }, exchange: result.exchange };
    if (result.outcome.kind === 'unknown') throw processorFailure(`Refund inquiry of ${refund.refundId} failed: ${result.outcome.reason}`, result.exchange);
    return { outcome: result.outcome as Exclude<RefundOutcome, { kind: 'unknown' }>, exchange: result.exchange };
  }

  /**
   * Records the processor's final answer as the refund transaction and settles the refund once. `call` undefined:
   * nothing reached the processor for sure (it never saw the refund), so no transaction is recorded.
   */
  async function settleRefundCall(input: { refundId: string; call?: RefundCall; statusId: number; message?: string }): Promise<RefundSettlement> {
    const outcome: RefundCallOutcome | undefined = input.call?.outcome;
    const succeeded = outcome?.kind === 'refunded';
    const settled = await fork().transactional(async (tx) => {
      const refundTransactionId =
        input.call && (outcome?.kind === 'refunded' || outcome?.kind === 'declined')
          ? await recordRefundTransaction(tx, {
              refundId: input.refundId,
              statusId: input.statusId,
              status: statusNameOf(input.statusId),
              success: succeeded,
              processorRefundId: outcome.processorRefundId ?? null,
              exchange: storable(input.call.exchange),
            })
          : undefined;
      return settleRefund(tx, { refundId: input.refundId, succeeded, statusId: input.statusId, failureMessage: input.message, refundTransactionId });
    });
    return { refundId: settled.id, state: settled.state, statusId: settled.statusId ?? input.statusId };
  }

  /** Records the `transaction.completed` deliveries of the refund transaction; one event per refund, however often recorded. */
  async function recordRefundEvent(input: { tenantId: number; refundId: string; occurredAt: string }): Promise<RecordedDelivery[]> {
    const em = fork();
    const event = await findRefundEvent(em, input.refundId);
    if (!event) return [];
    return recordWebhookDeliveries(em, {
      tenantId: input.tenantId,
      // Amounts as the payment's own `transaction.completed` carries them (the submit result's JSON numbers): one type per field of an event.
      event: {
        type: 'transaction.completed',
        timestamp: input.occurredAt,
        data: { kind: 'refund', ...event, amount: Number(event.amount), refundedAmount: Number(event.refundedAmount), paymentId: `pay_${event.orderId}`, submitOrderId: event.orderId },
      },
      eventKey: `transaction.completed/refund-${input.refundId}`,
    });
  }

  /** Refunds reserved at least `olderThanSeconds` ago that no workflow has claimed (see findUnstartedRefunds). */
  async function listUnstartedRefunds(input: { olderThanSeconds: number; limit: number }): Promise<{ tenantId: number; refundId: string }[]> {
    return findUnstartedRefunds(fork(), { reservedBefore: new Date(Date.now() - input.olderThanSeconds * 1000), limit: input.limit });
  }

  return withPermanentFailures({ claimRefund, markRefundForReview, sendRefund, inquireRefund, settleRefundCall, recordRefundEvent, listUnstartedRefunds });
}

/** PostgreSQL cannot hold a NUL even escaped in JSON; a processor answer with one keeps U+FFFD instead. */
function storable(exchange: RefundCall['exchange']): RefundCall['exchange'] {
  return exchange.response.includes('\0') ? { ...exchange, response: exchange.response.replaceAll('\0', '\uFFFD') } : exchange;
}
