import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawExchange } from '../../domain/payments/attempts.ts';
import { releaseApprovedVolume } from './merchant-accounts.ts';

/**
 * An authorization made with `capture: false`: held (order `authorized`, nothing refundable), then captured (order
 * `approved`, refundable) or voided (order `voided`, a `void` transaction referring to it). Each change is one
 * conditional statement on the order's state, so a replayed activity changes nothing twice.
 */
export async function holdAuthorization(em: EntityManager, hold: { orderId: number; transactionId: string }): Promise<void> {
  await em.execute(`update transactions set refundable = false where id = ? and order_id = ?`, [hold.transactionId, hold.orderId]);
  // Held from its first answer (`processing`), or once its 3-D Secure challenge approved it (`pending_3ds`).
  await em.execute(`update orders set state = 'authorized', updated_at = now() where id = ? and state in ('processing', 'pending_3ds')`, [hold.orderId]);
}

/**
 * The capture: the order approved, the authorization refundable and showing the capture's status (no longer 3367
 * Preauthorized). `status` absent (an activity scheduled before it was passed): the status stays as it was.
 */
export async function markCaptured(em: EntityManager, capture: { orderId: number; transactionId: string; status?: { id: number; name: string } }): Promise<void> {
  await em.execute(`update orders set state = 'approved', updated_at = now() where id = ? and state = 'authorized'`, [capture.orderId]);
  await em.execute(
    `update transactions set refundable = true, completed_at = now(), status_id = coalesce(?, status_id), status = coalesce(?, status) where id = ? and order_id = ?`,
    [capture.status?.id ?? null, capture.status?.name ?? null, capture.transactionId, capture.orderId],
  );
}

/**
 * Records the void as its own transaction (spec 2.8 kinds). Voided, the authorization charged nothing: it is not
 * refundable, its room on the merchant account's monthly cap is given back, and a held order ends `voided`.
 */
export async function recordVoid(
  em: EntityManager,
  input: { orderId: number; transactionId: string; voided: boolean; statusId: number; status: string; exchange: RawExchange },
): Promise<void> {
  await em.execute(
    `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
       gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, auth_code, email, first_name, last_name,
       bin, last4, brand, bin_country, card_fingerprint, expiry_month, expiry_year, eci, partner_session, sandbox, refundable, original_transaction_id,
       gateway_response, sent_at, completed_at)
     select gen_random_uuid(), t.tenant_id, t.order_id, t.product_id, t.customer_id, t.merchant_account_id, 'void', 'void-' || t.id, t.attempt_number, t.gateway,
       t.gateway_transaction_id, ?, ?, ?, t.amount, t.currency, t.mid, t.descriptor, null, t.email, t.first_name, t.last_name,
       t.bin, t.last4, t.brand, t.bin_country, t.card_fingerprint, t.expiry_month, t.expiry_year, null, t.partner_session, t.sandbox, false, t.id,
       ?, now(), now()
       from transactions t where t.id = ? and t.order_id = ?
     on conflict (reference) do nothing`,
    [input.statusId, input.status, input.voided, JSON.stringify(input.exchange), input.transactionId, input.orderId],
  );
  if (!input.voided) return;
  await em.execute(`update transactions set refundable = false where id = ? and order_id = ?`, [input.transactionId, input.orderId]);
  await releaseApprovedVolume(em, { orderId: input.orderId, transactionId: input.transactionId });
  await em.execute(`update orders set state = 'voided', updated_at = now() where id = ? and state = 'authorized'`, [input.orderId]);
}

/** The processor's reference of a held authorization's attempt: the key of its status inquiry. */
export async function heldAuthorizationReference(em: EntityManager, hold: { orderId: number; transactionId: string }): Promise<string | undefined> {
  const [row] = await em.execute<{ reference: string }[]>(`select reference from transactions where id = ? and order_id = ?`, [hold.transactionId, hold.orderId]);
  return row?.reference;
}

/**
 * Ends a held authorization that was neither captured nor voided by this gateway: `voided` (the processor says it was
 * released), `expired` (the processor refuses it or no longer knows it) or `failed` (nothing could be learnt). Only a
 * still-held order moves, so a replayed activity changes nothing twice. Voided or expired, nothing was charged: its
 * room on the monthly cap is given back; failed, it keeps counting (the card may have been charged). Voided or expired
 * with the processor's `status`, the authorization shows it, as its webhook does (no void transaction says it here).
 */
export async function endHold(em: EntityManager, end: { orderId: number; transactionId: string; state: 'voided' | 'expired' | 'failed'; status?: { id: number; name: string } }): Promise<void> {
  const ended = await em.execute<{ id: number }[]>(`update orders set state = ?, updated_at = now() where id = ? and state = 'authorized' returning id`, [end.state, end.orderId]);
  if (ended.length === 0 || end.state === 'failed') return;
  await releaseApprovedVolume(em, { orderId: end.orderId, transactionId: end.transactionId });
  if (end.status) await em.execute(`update transactions set status_id = ?, status = ? where id = ? and order_id = ?`, [end.status.id, end.status.name, end.transactionId, end.orderId]);
}
