import type { EntityManager } from '@mikro-orm/postgresql';
import { findPayment } from '../../data/queries/payments-api.ts';
import { PaymentApiError, resourceMissing } from '../../domain/payments-api/errors.ts';
import { orderIdOf } from '../../domain/payments-api/ids.ts';
import { statusById } from '../../domain/statuses/status-codes.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';

/**
 * `POST /payments/{id}/capture` and `/void`: asks the payment's workflow, which alone holds the authorization, to
 * capture or void it. Answers the payment's order id; a payment with no authorization waiting for that decision
 * (declined, failed, voided when a capture is asked, charged at once with `capture: true`) is refused and nothing
 * changes; asking again what is done (capturing a captured hold, voiding a voided one) answers the payment as it is. A decision the processor refuses
 * (the authorization expired, was voided or captured there) is a 402 `card_error` `capture_declined` / `void_declined`
 * with its `status_id`; the payment has then ended as the processor said.
 */
export async function decideAuthorization(
  deps: { em: EntityManager; runner: Pick<PaymentRunner, 'decideAuthorization'> },
  input: { tenantId: number; paymentId: string; decision: 'capture' | 'void' },
): Promise<number> {
  const orderId = orderIdOf(input.paymentId);
  const payment = orderId === undefined ? undefined : await findPayment(deps.em, input.tenantId, orderId);
  if (!payment || orderId === undefined) throw resourceMissing('payment', input.paymentId);
  // Charged with its authorization, it was never held: refused at once, whether or not Temporal answers.
  if (payment.captureMethod === 'automatic' && payment.state === 'approved') throw chargedAtOnce(input);
  const decided = await deps.runner.decideAuthorization({ tenantId: input.tenantId, submitOrderId: orderId, decision: input.decision });
  if (decided.kind !== 'decided') {
    // Refused: read again, for the payment read before asking may have been decided since (a repeat sent while the
    // first was finishing finds its workflow closed), and a repeat after the decision gets the payment as it is.
    const state = (await findPayment(deps.em, input.tenantId, orderId))?.state ?? payment.state;
    if (state === (input.decision === 'capture' ? 'approved' : 'voided')) return orderId;
    // Ended without a charge another way (its challenge or hold expired) as the void was asked: it is what was asked for.
    if (input.decision === 'void' && state === 'expired') return orderId;
    // A payment voided while it waited on its challenge may have been charged by a completion that came first.
    if (payment.captureMethod === 'automatic' && state === 'approved') throw chargedAtOnce(input);
    const now =
      state === 'authorized' ? 'is being decided' : state === 'voided' ? 'was voided' : state === 'pending_3ds' ? 'is waiting on its 3-D Secure challenge' : 'has no authorization waiting for capture';
    throw notAuthorized(input, now);
  }
  if (decided.state === (input.decision === 'capture' ? 'approved' : 'voided')) return orderId;
  if (decided.state === 'failed') {
    throw new PaymentApiError('api_error', `${input.decision}_failed`, `The processor did not ${input.decision} payment ${input.paymentId}`, { statusId: decided.statusId });
  }
  // The processor refused the decision; the payment ended as the processor said (expired, voided or captured there).
  const status = statusById(decided.statusId)?.status ?? 'refused';
  const now = decided.state === 'approved' ? 'was already captured' : decided.state === 'voided' ? 'was voided' : 'expired';
  throw new PaymentApiError('card_error', `${input.decision}_declined`, `The processor refused to ${input.decision} payment ${input.paymentId} (${status}): its authorization ${now}`, {
    statusId: decided.statusId,
  });
}

const notAuthorized = (input: { paymentId: string; decision: 'capture' | 'void' }, now: string, instead = '') =>
  new PaymentApiError('invalid_request_error', 'payment_not_authorized', `Payment ${input.paymentId} ${now}; it cannot be ${input.decision === 'capture' ? 'captured' : 'voided'}${instead}`, {
    param: 'id',
  });

/** A payment made with `capture: true`: a capture of it is the caller's mistake, not a repeat of one. */
const chargedAtOnce = (input: { paymentId: string; decision: 'capture' | 'void' }) =>
  notAuthorized(input, 'was captured when it was made (capture: true)', input.decision === 'void' ? '; refund it instead' : '');
