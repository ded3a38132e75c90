import type { EntityManager } from '@mikro-orm/postgresql';
import { findPayment } from '../../data/queries/payments-api.ts';
import { findRefund, reserveRefund, withdrawUnstartedRefund, type RefundRecord } from '../../data/queries/refunds.ts';
import { DomainError } from '../../domain/errors.ts';
import { PaymentApiError, resourceMissing } from '../../domain/payments-api/errors.ts';
import { orderIdOf } from '../../domain/payments-api/ids.ts';
import { fromMinorUnits, toMinorUnits } from '../../domain/payments-api/minor-units.ts';
import type { RefundRunner } from '../../domain/payments-api/refund-outcome.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';

export interface RefundDeps {
  readonly em: EntityManager;
  readonly runner: RefundRunner;
  readonly settings: { readonly processorTimeoutMs: number; readonly webhookSchedule: readonly number[]; readonly webhookTimeoutMs: number };
}

/**
 * `POST /payments/{id}/refund`: holds the amount on the payment's approved authorization (declined with 4313 when it
 * would exceed what is left of the captured amount, however many refunds race), then runs the refund workflow and
 * answers its settlement, or the refund still `pending` when the processor is slow. The same Idempotency-Key
 * answers the same refund; with another payment, amount (named or omitted) or reason it is a conflict.
 */
export async function requestRefund(
  deps: RefundDeps,
  input: { tenantId: number; paymentId: string; amount?: number; reason?: string; idempotencyKey?: string },
): Promise<RefundRecord> {
  const orderId = orderIdOf(input.paymentId);
  const payment = orderId === undefined ? undefined : await findPayment(deps.em, input.tenantId, orderId);
  if (!payment || orderId === undefined) throw resourceMissing('payment', input.paymentId);
  const amount = input.amount === undefined ? undefined : fromMinorUnits(input.amount, payment.currency);

  const reservation = await reserveRefund(deps.em, { tenantId: input.tenantId, orderId, amount, reason: input.reason, idempotencyKey: input.idempotencyKey });
  switch (reservation.kind) {
    case 'not_refundable':
      throw new PaymentApiError('invalid_request_error', 'payment_not_refundable', `Payment ${input.paymentId} has no approved charge to refund`, { param: 'id' });
    case 'exceeds':
      throw new PaymentApiError(
        'invalid_request_error',
        'credit_exceeds_original_amount',
        `Credit Exceeds Original Amount: at most ${toMinorUnits(reservation.available, payment.currency)} can still be refunded`,
        { param: 'amount', statusId: StatusId.CREDIT_EXCEEDS_ORIGINAL_AMOUNT },
      );
    case 'duplicate': {
      const earlier = reservation.refund;
      // The same request: payment, amount as asked (named, or "what is left") and reason.
      const same = earlier.orderId === orderId && earlier.requestedAmount === (amount ?? null) && earlier.reason === (input.reason ?? null);
      if (!same) throw new PaymentApiError('idempotency_error', 'idempotency_key_reused', 'Idempotency-Key was already used with a different request', { param: 'Idempotency-Key' });
      return settleOrCurrent(deps, input.tenantId, reservation.refund);
    }
    case 'reserved':
      return settleOrCurrent(deps, input.tenantId, reservation.refund);
  }
}

/**
 * Runs (or joins) the refund's workflow and answers the refund as it stands afterwards. A refund marked for review
 * has no workflow left to join: it is answered as it stands (pending), not retried.
 */
async function settleOrCurrent(deps: RefundDeps, tenantId: number, refund: RefundRecord): Promise<RefundRecord> {
  if (refund.state === 'pending' && refund.reviewRequiredAt === null) {
    try {
      await deps.runner.run({
        tenantId,
        refundId: refund.id,
        processorTimeoutMs: deps.settings.processorTimeoutMs,
        webhookSchedule: deps.settings.webhookSchedule,
        webhookTimeoutMs: deps.settings.webhookTimeoutMs,
      });
    } catch {
      // Temporal unreachable (or the start's answer lost). Unless its workflow has already claimed it, the refund
      // is undone, row and hold, so nothing stays held with no workflow to end it, and the request changed nothing.
      // A claimed refund goes on (its workflow ends it); the same Idempotency-Key joins it, never a second refund.
      const withdrawn = await withdrawUnstartedRefund(deps.em, tenantId, refund.id);
      throw withdrawn
        ? refundNotStarted()
        : new DomainError('unavailable', `Refund ${refund.id} is pending and could not be followed now; retry with the same Idempotency-Key`, {});
    }
  }
  const current = await findRefund(deps.em, tenantId, refund.id);
  // Withdrawn meanwhile by a request that could not start its workflow: this one changed nothing either.
  if (!current) throw refundNotStarted();
  return current;
}

/** A refund request that changed nothing (its workflow could not be started, and its row and hold were undone). */
const refundNotStarted = () => new DomainError('unavailable', 'The refund could not be started now; nothing was refunded or held. Retry later', { nothingTaken: true });
