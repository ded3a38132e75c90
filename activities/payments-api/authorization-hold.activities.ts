import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ProcessorGateway } from '../../adapters/processors/processor-gateway.ts';
import { holdAuthorization, markCaptured, recordVoid } from '../../data/queries/authorization-holds.ts';
import type { Logger } from '../../domain/logger.ts';
import { statusById } from '../../domain/statuses/status-codes.ts';
import { recordWebhookDeliveries, type RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import { processorFailure, withPermanentFailures } from '../shared/permanent-failures.ts';

export interface AuthorizationHoldActivityDeps {
  readonly orm: MikroORM;
  readonly logger: Logger;
  readonly processors: { get(name: string): ProcessorGateway; names(): string[] };
}

interface Held {
  readonly submitOrderId: number;
  /** The approved attempt's transaction. */
  readonly transactionId: string;
  readonly gateway: string;
  readonly processorTransactionId: string;
}

const VOIDED = 4166;
const ALREADY_CAPTURED = 4175;

/** An authorization made with `capture: false`: hold it, then capture or void it at the processor. */
export function createAuthorizationHoldActivities(deps: AuthorizationHoldActivityDeps) {
  const fork = (): EntityManager => deps.orm.em.fork() as EntityManager;

  async function holdApprovedAuthorization(input: { submitOrderId: number; transactionId: string }): Promise<void> {
    await fork().transactional((tx) => holdAuthorization(tx, { orderId: input.submitOrderId, transactionId: input.transactionId }));
  }

  /** Captures at the processor (idempotent there), then marks the payment approved; a refusal changes nothing. */
  async function captureHeldAuthorization(input: Held & { timeoutMs: number }): Promise<{ captured: boolean; statusId: number }> {
    const result = await deps.processors.get(input.gateway).capture(input.processorTransactionId, input.timeoutMs);
    if (!result.outcome.answered) throw processorFailure(`Capture of order ${input.submitOrderId} failed: ${result.outcome.reason}`, result.exchange);
    if (result.outcome.captured) await fork().transactional((tx) => markCaptured(tx, { orderId: input.submitOrderId, transactionId: input.transactionId }));
    deps.logger.info({ submitOrderId: input.submitOrderId, captured: result.outcome.captured }, 'authorization capture');
    return { captured: result.outcome.captured, statusId: result.outcome.statusId };
  }

  /** Voids at the processor and records the `void` transaction; a processor that refuses (already captured) leaves the payment as it is. */
  async function voidHeldAuthorization(input: Held & { timeoutMs: number }): Promise<{ voided: boolean; statusId: number }> {
    const result = await deps.processors.get(input.gateway).void(input.processorTransactionId, input.timeoutMs);
    const { voided } = result.outcome;
    if (!voided && (result.exchange.httpStatus === 0 || result.exchange.httpStatus >= 500)) {
      throw processorFailure(`Void of order ${input.submitOrderId} got no answer`, result.exchange);
    }
    const statusId = voided ? VOIDED : ALREADY_CAPTURED;
    await fork().transactional((tx) =>
      recordVoid(tx, { orderId: input.submitOrderId, transactionId: input.transactionId, voided, statusId, status: statusById(statusId)?.status ?? 'Unknown', exchange: result.exchange }),
    );
    deps.logger.info({ submitOrderId: input.submitOrderId, voided }, 'authorization void');
    return { voided, statusId };
  }

  /** `transaction.updated`: the held authorization was captured or voided; one event per change however often recorded. */
  async function recordAuthorizationChange(input: { tenantId: number; submitOrderId: number; change: 'captured' | 'voided'; statusId: number; amount: string; currency: string; occurredAt: string }): Promise<RecordedDelivery[]> {
    return recordWebhookDeliveries(fork(), {
      tenantId: input.tenantId,
      event: {
        type: 'transaction.updated',
        timestamp: input.occurredAt,
        data: { paymentId: `pay_${input.submitOrderId}`, submitOrderId: input.submitOrderId, orderId: input.submitOrderId, change: input.change, statusId: input.statusId, amount: input.amount, currency: input.currency },
      },
      eventKey: `transaction.updated/order-${input.submitOrderId}/${input.change}`,
    });
  }

  return withPermanentFailures({ holdApprovedAuthorization, captureHeldAuthorization, voidHeldAuthorization, recordAuthorizationChange });
}
