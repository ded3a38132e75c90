import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ProcessorGateway, RefundOutcome } from '../../adapters/processors/processor-gateway.ts';
import { findRefundEvent, findRefundInstruction, recordRefundTransaction, settleRefund, type RefundInstruction } from '../../data/queries/refunds.ts';
import type { Logger } from '../../domain/logger.ts';
import type { RefundCall, RefundCallOutcome, RefundSettlement } from '../../domain/payments-api/refund-outcome.ts';
import { statusById } from '../../domain/statuses/status-codes.ts';
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

  async function instruction(refundId: string): Promise<RefundInstruction> {
    const found = await findRefundInstruction(fork(), refundId);
    // A refund row is written before its workflow starts; without one (or without a processor id) nothing can be sent.
    if (!found) throw ApplicationFailure.nonRetryable(`Refund ${refundId} has no refundable original`, 'RefundUnknown');
    return found;
  }

  /** Sends the refund under its own id as reference: the processor deduplicates a resend. */
  async function sendRefund(input: { refundId: string; timeoutMs: number }): Promise<RefundCall> {
    const refund = await instruction(input.refundId);
    const result = await deps.processors
      .get(refund.gateway)
      .refund({ reference: refund.refundId, processorTransactionId: refund.processorTransactionId, amount: refund.amount }, input.timeoutMs);
    deps.logger.info({ refundId: refund.refundId, outcome: result.outcome.kind }, 'refund sent');
    return { outcome: result.outcome, exchange: result.exchange };
  }

  /** Asks what became of a refund whose answer was lost; a processor that does not answer is asked again (retried). */
  async function inquireRefund(input: { refundId: string; timeoutMs: number }): Promise<RefundCall> {
    const refund = await instruction(input.refundId);
    const result = await deps.processors.get(refund.gateway).inquireRefund(refund.refundId, input.timeoutMs);
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
              status: statusById(input.statusId)?.status ?? 'Unknown',
              success: succeeded,
              processorRefundId: outcome.processorRefundId ?? null,
              exchange: storable(input.call.exchange),
            })
          : undefined;
      return settleRefund(tx, { refundId: input.refundId, succeeded, statusId: input.statusId, failureMessage: input.message, refundTransactionId });
    });
    return { refundId: settled.id, state: settled.state === 'succeeded' ? 'succeeded' : 'failed', statusId: settled.statusId ?? input.statusId };
  }

  /** Records the `transaction.completed` deliveries of the refund transaction; one event per refund, however often recorded. */
  async function recordRefundEvent(input: { tenantId: number; refundId: string; occurredAt: string }): Promise<RecordedDelivery[]> {
    const em = fork();
    const event = await findRefundEvent(em, input.refundId);
    if (!event) return [];
    return recordWebhookDeliveries(em, {
      tenantId: input.tenantId,
      event: { type: 'transaction.completed', timestamp: input.occurredAt, data: { kind: 'refund', ...event, paymentId: `pay_${event.orderId}`, submitOrderId: event.orderId } },
      eventKey: `transaction.completed/refund-${input.refundId}`,
    });
  }

  return withPermanentFailures({ sendRefund, inquireRefund, settleRefundCall, recordRefundEvent });
}

/** PostgreSQL cannot hold a NUL even escaped in JSON; a processor answer with one keeps U+FFFD instead. */
function storable(exchange: RefundCall['exchange']): RefundCall['exchange'] {
  return exchange.response.includes('\0') ? { ...exchange, response: exchange.response.replaceAll('\0', '\uFFFD') } : exchange;
}
