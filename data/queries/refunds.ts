import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { newRefundId } from '../../domain/payments-api/new-refund-id.ts';
import type { RawExchange } from '../../domain/payments/attempts.ts';
import type { RefundState } from '../../schema/entities/index.ts';

export interface RefundRecord {
  readonly id: string;
  readonly tenantId: number;
  readonly orderId: number;
  readonly originalTransactionId: string;
  readonly amount: string;
  /** The amount the request named; null when it asked for what was left. */
  readonly requestedAmount: string | null;
  readonly currency: string;
  readonly state: RefundState;
  readonly statusId: number | null;
  readonly failureMessage: string | null;
  readonly refundTransactionId: string | null;
  readonly reason: string | null;
  readonly idempotencyKey: string | null;
  readonly createdAt: Date;
  /** Set when its workflow could not learn the processor's answer: pending and held until an operator settles it. */
  readonly reviewRequiredAt: Date | null;
}

interface RefundRow {
  id: string;
  tenant_id: number;
  order_id: number;
  original_transaction_id: string;
  amount: string;
  requested_amount: string | null;
  currency: string;
  state: RefundState;
  status_id: number | null;
  failure_message: string | null;
  refund_transaction_id: string | null;
  reason: string | null;
  idempotency_key: string | null;
  created_at: Date;
  review_required_at: Date | null;
}

const toRecord = (row: RefundRow): RefundRecord => ({
  id: row.id,
  tenantId: row.tenant_id,
  orderId: row.order_id,
  originalTransactionId: row.original_transaction_id,
  amount: row.amount,
  requestedAmount: row.requested_amount,
  currency: row.currency,
  state: row.state,
  statusId: row.status_id,
  failureMessage: row.failure_message,
  refundTransactionId: row.refund_transaction_id,
  reason: row.reason,
  idempotencyKey: row.idempotency_key,
  createdAt: new Date(row.created_at),
  reviewRequiredAt: row.review_required_at === null ? null : new Date(row.review_required_at),
});

export async function findRefund(em: EntityManager, tenantId: number, refundId: string): Promise<RefundRecord | undefined> {
  const [row] = await em.execute<RefundRow[]>(`select * from refunds where id = ? and tenant_id = ?`, [refundId, tenantId]);
  return row && toRecord(row);
}

export async function findRefundByKey(em: EntityManager, tenantId: number, idempotencyKey: string): Promise<RefundRecord | undefined> {
  const [row] = await em.execute<RefundRow[]>(`select * from refunds where tenant_id = ? and idempotency_key = ?`, [tenantId, idempotencyKey]);
  return row && toRecord(row);
}

export interface RefundPage {
  readonly refunds: RefundRecord[];
  readonly hasMore: boolean;
}

/**
 * A page of a payment's refunds, oldest first, after the refund `startingAfter` (of the same payment; undefined
 * when there is no such refund, so a forged cursor is refused rather than read as "from the start").
 */
export async function listRefundsOfOrder(
  em: EntityManager,
  tenantId: number,
  orderId: number,
  page: { limit: number; startingAfter?: string } = { limit: 100 },
): Promise<RefundPage | undefined> {
  if (page.startingAfter !== undefined) {
    const [cursor] = await em.execute<{ id: string }[]>(`select id from refunds where id = ? and tenant_id = ? and order_id = ?`, [page.startingAfter, tenantId, orderId]);
    if (!cursor) return undefined;
  }
  // Compared in SQL: the cursor's created_at keeps its microseconds, which a JavaScript Date would round off.
  const rows = await em.execute<RefundRow[]>(
    `select * from refunds where tenant_id = ? and order_id = ?
        and (?::text is null or (created_at, id) > (select created_at, id from refunds where id = ?))
      order by created_at, id limit ?`,
    [tenantId, orderId, page.startingAfter ?? null, page.startingAfter ?? null, page.limit + 1],
  );
  return { refunds: rows.slice(0, page.limit).map(toRecord), hasMore: rows.length > page.limit };
}

export type RefundReservation =
  | { readonly kind: 'reserved'; readonly refund: RefundRecord }
  /** Nothing approved to refund (declined, pending or failed payment). */
  | { readonly kind: 'not_refundable' }
  /** The amount is more than what is left of the captured amount (refunded and in-flight refunds counted). */
  | { readonly kind: 'exceeds'; readonly available: string }
  /** The idempotency key already names a refund: that one is the answer. */
  | { readonly kind: 'duplicate'; readonly refund: RefundRecord };

class Rollback extends Error {
  constructor(
    readonly result: RefundReservation,
    /** Something is still left: a refund of "what is left" that lost a race to another refund tries again. */
    readonly somethingLeft = false,
  ) {
    super('rollback');
  }
}

/** How often a refund of "what is left" is tried again when other refunds took part of it meanwhile. */
const WHAT_IS_LEFT_ROUNDS = 5;

/**
 * Opens a pending refund of a payment's approved authorization, holding its amount on that transaction with one
 * conditional update: concurrent refunds queue on the row lock and each re-checks the sum, so together they never
 * exceed the captured amount. `amount` undefined refunds what is left. Nothing is written unless it is reserved.
 *
 * A known idempotency key answers its refund before anything else (whatever is left now: a replayed full refund
 * finds nothing left, yet must answer the first). A refusal looks the key up once more, as a request with the same
 * key may have committed since; a race of first uses is settled by the insert's conflict, which waits for the other.
 */
export async function reserveRefund(
  em: EntityManager,
  input: { tenantId: number; orderId: number; amount?: string; reason?: string; idempotencyKey?: string },
): Promise<RefundReservation> {
  const underKey = async (tx: EntityManager): Promise<RefundReservation | undefined> => {
    const refund = input.idempotencyKey === undefined ? undefined : await findRefundByKey(tx, input.tenantId, input.idempotencyKey);
    return refund && { kind: 'duplicate', refund };
  };
  for (let round = 1; ; round++) {
    try {
      return await reserveOnce(em, input, underKey);
    } catch (error) {
      if (!(error instanceof Rollback)) throw error;
      // "What is left" was read before another refund reserved part of it: read it again (it only shrinks).
      if (error.somethingLeft && input.amount === undefined && round < WHAT_IS_LEFT_ROUNDS) continue;
      return error.result;
    }
  }
}

/** One try of `reserveRefund`, in one transaction; a refusal after the insert rolls back as `Rollback`. */
function reserveOnce(
  em: EntityManager,
  input: { tenantId: number; orderId: number; amount?: string; reason?: string; idempotencyKey?: string },
  underKey: (tx: EntityManager) => Promise<RefundReservation | undefined>,
): Promise<RefundReservation> {
  return em.transactional(async (tx) => {
    const earlier = await underKey(tx);
    if (earlier) return earlier;
    // The original's row is locked first (before the key's insert, in every refund: one order of locks), so "what is
    // left" is read as the refunds before this one left it and none can take part of it before the hold below: a
    // refund of what is left is never refused while something is left, however many refunds arrive at once.
    const [original] = await tx.execute<{ id: string; amount: string; currency: string; available: string; nothing_left: boolean }[]>(
      `select t.id, t.amount, t.currency, t.amount - t.refunded_amount - t.refund_reserved_amount as available,
              t.amount - t.refunded_amount - t.refund_reserved_amount <= 0 as nothing_left
         from transactions t join orders o on o.id = t.order_id
        where t.order_id = ? and t.tenant_id = ? and t.kind = 'authorization' and t.success and o.state = 'approved'
        order by t.attempt_number desc limit 1
          for no key update of t`,
      [input.orderId, input.tenantId],
    );
    if (!original) return (await underKey(tx)) ?? ({ kind: 'not_refundable' } as const);
    // "What is left" of nothing is refused here: a refund of 0 would break refunds_amount_positive (a 500), and
    // PostgreSQL checks that constraint before it looks for the key's conflict.
    if (input.amount === undefined && original.nothing_left) return (await underKey(tx)) ?? ({ kind: 'exceeds', available: original.available } as const);
    const refundId = newRefundId();
    const [inserted] = await tx.execute<RefundRow[]>(
      `insert into refunds (id, tenant_id, order_id, original_transaction_id, amount, requested_amount, currency, state, reason, idempotency_key, created_at, updated_at)
       values (?, ?, ?, ?, coalesce(?::numeric, ?::numeric), ?::numeric, ?, 'pending', ?, ?, now(), now())
       on conflict (tenant_id, idempotency_key) do nothing returning *`,
      [refundId, input.tenantId, input.orderId, original.id, input.amount ?? null, original.available, input.amount ?? null, original.currency, input.reason ?? null, input.idempotencyKey ?? null],
    );
    if (!inserted) {
      const existing = await findRefundByKey(tx, input.tenantId, input.idempotencyKey!);
      return { kind: 'duplicate', refund: existing! } as const;
    }
    const [held] = await tx.execute<{ id: string }[]>(
      `update transactions set refund_reserved_amount = refund_reserved_amount + ?
        where id = ? and ?::numeric > 0 and refunded_amount + refund_reserved_amount + ? <= amount returning id`,
      [inserted.amount, original.id, inserted.amount, inserted.amount],
    );
    if (!held) {
      const [now] = await tx.execute<{ available: string; something_left: boolean }[]>(
        `select amount - refunded_amount - refund_reserved_amount as available, amount - refunded_amount - refund_reserved_amount > 0 as something_left from transactions where id = ?`,
        [original.id],
      );
      throw new Rollback({ kind: 'exceeds', available: now!.available }, now!.something_left);
    }
    return { kind: 'reserved', refund: toRecord(inserted) } as const;
  });
}

/** What the refund workflow may do with a refund: send it (`claimed`), or nothing (the rest say why). */
export type RefundClaim = 'claimed' | 'succeeded' | 'failed' | 'under_review' | 'withdrawn';

/**
 * The refund workflow's first step: marks a pending refund as going to the processor (once; a restarted workflow
 * claims it again). Conditional on `pending`, so it and `withdrawUnstartedRefund` are ordered by the row lock:
 * exactly one of them wins, and a workflow started after the withdrawal sends nothing.
 */
export async function claimRefundForSending(em: EntityManager, refundId: string): Promise<RefundClaim> {
  const [claimed] = await em.execute<{ id: string }[]>(
    `update refunds set submitted_at = coalesce(submitted_at, now()) where id = ? and state = 'pending' and review_required_at is null returning id`,
    [refundId],
  );
  if (claimed) return 'claimed';
  const [row] = await em.execute<{ state: RefundState }[]>(`select state from refunds where id = ?`, [refundId]);
  if (!row) return 'withdrawn';
  return row.state === 'pending' ? 'under_review' : row.state;
}

/**
 * Refunds no workflow has claimed that were reserved before `reservedBefore`, oldest first: their request's gateway
 * stopped between reserving and starting the workflow (a request that could not start it withdraws its refund).
 */
export async function findUnstartedRefunds(em: EntityManager, input: { reservedBefore: Date; limit: number }): Promise<{ tenantId: number; refundId: string }[]> {
  const rows = await em.execute<{ tenant_id: number; id: string }[]>(
    `select tenant_id, id from refunds
      where state = 'pending' and submitted_at is null and review_required_at is null and created_at < ?
      order by created_at limit ?`,
    [input.reservedBefore, input.limit],
  );
  return rows.map((row) => ({ tenantId: row.tenant_id, refundId: row.id }));
}

/**
 * Undoes a refund whose workflow could not be started, as if it had never been asked: deletes the row and
 * releases its hold, only while no workflow has claimed it (`submitted_at` null). True when undone.
 */
export async function withdrawUnstartedRefund(em: EntityManager, tenantId: number, refundId: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const [withdrawn] = await tx.execute<{ amount: string; original_transaction_id: string }[]>(
      `delete from refunds where id = ? and tenant_id = ? and state = 'pending' and submitted_at is null returning amount, original_transaction_id`,
      [refundId, tenantId],
    );
    if (!withdrawn) return false;
    await tx.execute(`update transactions set refund_reserved_amount = refund_reserved_amount - ? where id = ?`, [withdrawn.amount, withdrawn.original_transaction_id]);
    return true;
  });
}

/** Spec 7.5 "Transaction Under Review": the status of a refund kept for an operator. */
const TRANSACTION_UNDER_REVIEW = 4283;

/**
 * Leaves a refund whose processor answer cannot be learnt `pending` with its amount held (the money may have
 * moved), marked for an operator (status 4283) with the reason. A settled refund is left as it is.
 */
export async function requireRefundReview(em: EntityManager, input: { refundId: string; reason: string }): Promise<void> {
  await em.execute(
    `update refunds set review_required_at = coalesce(review_required_at, now()), status_id = ?, failure_message = ?, updated_at = now() where id = ? and state = 'pending'`,
    [TRANSACTION_UNDER_REVIEW, input.reason.slice(0, 255), input.refundId],
  );
}

/** What a refund workflow needs to call the processor: the original approval's gateway and processor id. */
export interface RefundInstruction {
  readonly refundId: string;
  readonly tenantId: number;
  readonly orderId: number;
  readonly amount: string;
  readonly currency: string;
  readonly gateway: string;
  readonly processorTransactionId: string;
  readonly originalTransactionId: string;
}

export async function findRefundInstruction(em: EntityManager, refundId: string): Promise<RefundInstruction | undefined> {
  const [row] = await em.execute<{ id: string; tenant_id: number; order_id: number; amount: string; currency: string; gateway: string; gateway_transaction_id: string | null; original_transaction_id: string }[]>(
    `select r.id, r.tenant_id, r.order_id, r.amount, r.currency, t.gateway, t.gateway_transaction_id, r.original_transaction_id
       from refunds r join transactions t on t.id = r.original_transaction_id where r.id = ?`,
    [refundId],
  );
  if (!row || !row.gateway_transaction_id) return undefined;
  return {
    refundId: row.id,
    tenantId: row.tenant_id,
    orderId: row.order_id,
    amount: row.amount,
    currency: row.currency,
    gateway: row.gateway,
    processorTransactionId: row.gateway_transaction_id,
    originalTransactionId: row.original_transaction_id,
  };
}

/**
 * The refund's own `refund` transaction (spec 2.8: it refers to its original by `original_transaction_id`), copied
 * from the original's order, card facts and account; upserted by its reference (the refund id), so a replayed
 * activity records it once. `sent_at` is when the refund was claimed for sending, right before it went out.
 */
export async function recordRefundTransaction(
  em: EntityManager,
  input: { refundId: string; statusId: number; status: string; success: boolean; processorRefundId: string | null; exchange: RawExchange },
): Promise<string> {
  const [row] = await em.execute<{ id: string }[]>(
    `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
       gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, auth_code, email, first_name, last_name,
       bin, last4, brand, bin_country, card_fingerprint, expiry_month, expiry_year, eci, partner_session, sandbox, refundable, original_transaction_id,
       gateway_response, sent_at, completed_at)
     select ?, t.tenant_id, t.order_id, t.product_id, t.customer_id, t.merchant_account_id, 'refund', r.id, 1, t.gateway,
       ?, ?, ?, ?, r.amount, r.currency, t.mid, t.descriptor, null, t.email, t.first_name, t.last_name,
       t.bin, t.last4, t.brand, t.bin_country, t.card_fingerprint, t.expiry_month, t.expiry_year, null, t.partner_session, t.sandbox, false, t.id,
       ?, coalesce(r.submitted_at, now()), now()
       from refunds r join transactions t on t.id = r.original_transaction_id where r.id = ?
     on conflict (reference) do update set status_id = excluded.status_id, status = excluded.status, success = excluded.success,
       gateway_transaction_id = coalesce(excluded.gateway_transaction_id, transactions.gateway_transaction_id), gateway_response = excluded.gateway_response
     returning id`,
    [randomUUID(), input.processorRefundId, input.statusId, input.status, input.success, JSON.stringify(input.exchange), input.refundId],
  );
  return row!.id;
}

/**
 * Ends a pending refund exactly once: succeeded moves its held amount into `refunded_amount` on the original
 * (`refunded` true, `refundable` while something is left); failed releases the hold. A repeat changes nothing.
 */
export async function settleRefund(
  em: EntityManager,
  input: { refundId: string; succeeded: boolean; statusId: number; failureMessage?: string; refundTransactionId?: string },
): Promise<RefundRecord> {
  return em.transactional(async (tx) => {
    const [settled] = await tx.execute<{ amount: string; original_transaction_id: string }[]>(
      `update refunds set state = ?, status_id = ?, failure_message = ?, refund_transaction_id = ?, updated_at = now()
        where id = ? and state = 'pending' returning amount, original_transaction_id`,
      [input.succeeded ? 'succeeded' : 'failed', input.statusId, input.failureMessage?.slice(0, 255) ?? null, input.refundTransactionId ?? null, input.refundId],
    );
    if (settled) {
      // The original's row lock lines settlements up: each reads the total its own left, which its webhook tells.
      const [after] = await tx.execute<{ refunded_amount: string; refundable: boolean }[]>(
        input.succeeded
          ? `update transactions set refund_reserved_amount = refund_reserved_amount - ?, refunded_amount = refunded_amount + ?, refunded = true,
               refundable = refunded_amount + ? < amount where id = ? returning refunded_amount, refundable`
          : `update transactions set refund_reserved_amount = refund_reserved_amount - ? where id = ? returning refunded_amount, refundable`,
        input.succeeded ? [settled.amount, settled.amount, settled.amount, settled.original_transaction_id] : [settled.amount, settled.original_transaction_id],
      );
      await tx.execute(`update refunds set refunded_total_after = ?, refundable_after = ? where id = ?`, [after!.refunded_amount, after!.refundable, input.refundId]);
    }
    const [row] = await tx.execute<RefundRow[]>(`select * from refunds where id = ?`, [input.refundId]);
    return toRecord(row!);
  });
}

/** What the refund's transaction webhook tells: the refund, its transaction and the original it refers to. */
export interface RefundEventData {
  readonly refundId: string;
  readonly orderId: number;
  readonly success: boolean;
  readonly statusId: number | null;
  readonly amount: string;
  readonly currency: string;
  readonly transactionId: string;
  readonly originalTransactionId: string;
  readonly refundedAmount: string;
  readonly refundable: boolean;
  readonly email: string;
  readonly mid: string;
  readonly bin: string;
  readonly last4: string;
  readonly partnerSession: string;
}

export async function findRefundEvent(em: EntityManager, refundId: string): Promise<RefundEventData | undefined> {
  const [row] = await em.execute<
    { id: string; state: RefundState; status_id: number | null; amount: string; currency: string; order_id: number; transaction_id: string | null; original_transaction_id: string; refunded_amount: string; refundable: boolean; email: string; mid: string | null; bin: string; last4: string; partner_session: string | null }[]
  >(
    // As the refund's settlement left the payment; a refund settled before those were kept: the payment as it is.
    `select r.id, r.state, r.status_id, r.amount, r.currency, r.order_id, r.refund_transaction_id as transaction_id, o.id as original_transaction_id,
            coalesce(r.refunded_total_after, o.refunded_amount) as refunded_amount, coalesce(r.refundable_after, o.refundable) as refundable,
            o.email, o.mid, o.bin, o.last4, o.partner_session
       from refunds r join transactions o on o.id = r.original_transaction_id where r.id = ?`,
    [refundId],
  );
  return (
    row && {
      refundId: row.id,
      orderId: row.order_id,
      success: row.state === 'succeeded',
      statusId: row.status_id,
      amount: row.amount,
      currency: row.currency,
      transactionId: row.transaction_id ?? '',
      originalTransactionId: row.original_transaction_id,
      refundedAmount: row.refunded_amount,
      refundable: row.refundable,
      email: row.email,
      mid: row.mid ?? '',
      bin: row.bin,
      last4: row.last4,
      partnerSession: row.partner_session ?? '',
    }
  );
}
