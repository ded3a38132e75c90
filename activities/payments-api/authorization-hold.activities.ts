import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ProcessorGateway } from '../../adapters/processors/processor-gateway.ts';
import { endHold, heldAuthorizationReference, holdAuthorization, markCaptured, recordVoid } from '../../data/queries/authorization-holds.ts';
import type { Logger } from '../../domain/logger.ts';
import { statusNameOf } from '../../domain/statuses/status-codes.ts';
import { recordWebhookDeliveries, type RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import { processorFailure, withPermanentFailures } from '../shared/permanent-failures.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';

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

/** Where a held authorization stands at the processor, by its status inquiry. */
export type HeldAtProcessor =
  | { readonly state: 'held' | 'captured' | 'voided'; readonly statusId: number }
  /** The processor does not know the authorization (any more): nothing is held. */
  | { readonly state: 'missing'; readonly statusId: number };

/** How a held authorization ends on this side; `approved` is a capture. */
export type HoldEnd = 'approved' | 'voided' | 'expired' | 'failed';

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
    if (result.outcome.captured) {
      const status = { id: result.outcome.statusId, name: statusNameOf(result.outcome.statusId) };
      await fork().transactional((tx) => markCaptured(tx, { orderId: input.submitOrderId, transactionId: input.transactionId, status }));
    }
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
    const statusId = voided ? StatusId.VOIDED : StatusId.AUTHORIZATION_EXPIRED_OR_ALREADY_CAPTURED;
    await fork().transactional((tx) =>
      recordVoid(tx, { orderId: input.submitOrderId, transactionId: input.transactionId, voided, statusId, status: statusNameOf(statusId), exchange: result.exchange }),
    );
    deps.logger.info({ submitOrderId: input.submitOrderId, voided }, 'authorization void');
    return { voided, statusId };
  }

  /**
   * Asks the processor where a held authorization stands, after a capture or void it refused or never answered.
   * An approval still preauthorized is held, any other approval was captured, a decline (4166 voided) was released.
   * No answer throws (retried); a refused inquiry is not something retrying fixes.
   */
  async function inquireHeldAuthorization(input: Held & { timeoutMs: number }): Promise<HeldAtProcessor> {
    const reference = await heldAuthorizationReference(fork(), { orderId: input.submitOrderId, transactionId: input.transactionId });
    if (reference === undefined) return { state: 'missing', statusId: StatusId.TRANSACTION_NOT_FOUND };
    const result = await deps.processors.get(input.gateway).inquire(reference, input.timeoutMs);
    const outcome = result.outcome;
    if (outcome === null) return { state: 'missing', statusId: StatusId.TRANSACTION_NOT_FOUND };
    if (outcome.kind === 'unknown') throw processorFailure(`Inquiry of held authorization ${reference} failed: ${outcome.reason}`, result.exchange);
    const found: HeldAtProcessor =
      outcome.kind === 'approved'
        ? { state: outcome.statusId === StatusId.PREAUTHORIZED ? 'held' : 'captured', statusId: outcome.statusId }
        : outcome.kind === 'declined'
          ? { state: 'voided', statusId: outcome.statusId }
          : { state: 'missing', statusId: StatusId.TRANSACTION_NOT_FOUND };
    deps.logger.info({ submitOrderId: input.submitOrderId, found: found.state, statusId: found.statusId }, 'held authorization inquiry');
    return found;
  }

  /** Ends a held authorization as the processor's answers decide: captured (refundable), voided, expired or failed. */
  async function endHeldAuthorization(input: { submitOrderId: number; transactionId: string; end: HoldEnd; /** The status it ended with (absent before it was passed). */ statusId?: number }): Promise<void> {
    const status = input.statusId === undefined ? undefined : { id: input.statusId, name: statusNameOf(input.statusId) };
    await fork().transactional((tx) =>
      input.end === 'approved' ? markCaptured(tx, { orderId: input.submitOrderId, transactionId: input.transactionId, status }) : endHold(tx, { orderId: input.submitOrderId, transactionId: input.transactionId, state: input.end, status }),
    );
    deps.logger.info({ submitOrderId: input.submitOrderId, end: input.end }, 'held authorization ended');
  }

  /** `transaction.updated`: the held authorization was captured, voided, expired or failed; one event per change however often recorded. */
  async function recordAuthorizationChange(input: { tenantId: number; submitOrderId: number; change: 'captured' | 'voided' | 'expired' | 'failed'; statusId: number; amount: string; currency: string; occurredAt: string }): Promise<RecordedDelivery[]> {
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

  return withPermanentFailures({ holdApprovedAuthorization, captureHeldAuthorization, voidHeldAuthorization, inquireHeldAuthorization, endHeldAuthorization, recordAuthorizationChange });
}
