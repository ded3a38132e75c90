import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OrderState } from '../../schema/entities/index.ts';
import type { SqlExecutor } from '../sql-executor.ts';
import type { MerchantCandidate, RawExchange } from '../../domain/payments/attempts.ts';
import type { CardSummary } from '../../domain/payments/payment-input.ts';

/** One authorization attempt as the `transactions` table records it (card facts only: never PAN or CVV). */
export interface AuthorizationAttemptRecord {
  readonly submitOrderId: number;
  readonly reference: string;
  readonly attemptNumber: number;
  readonly merchantAccount: Pick<MerchantCandidate, 'merchantAccountId' | 'gateway' | 'mid' | 'descriptor'>;
  readonly processorTransactionId: string | null;
  readonly statusId: number;
  readonly status: string;
  readonly approved: boolean;
  readonly authCode: string | null;
  readonly eci: string | null;
  readonly amount: string;
  readonly currency: string;
  readonly email: string;
  readonly firstName?: string;
  readonly lastName?: string;
  readonly card: CardSummary;
  readonly sandbox: boolean;
  readonly exchange: RawExchange;
  /** When the authorization went to the processor; the recording's own time when not given (never sent, or not known). */
  readonly sentAt?: Date;
  /** Null while the outcome is still open (a 3-D Secure challenge, an unknown answer). */
  readonly completedAt: Date | null;
}

export interface RecordedAttempt {
  readonly transactionId: string;
  /** Whether an earlier recording of this attempt (a replayed activity) was already an approval. */
  readonly wasApproved: boolean;
  /** The attempt was already recorded with the processor's final word, which was kept: this record changed nothing. */
  readonly alreadySettled: boolean;
}

/** An attempt's recorded outcome, read back by its reference. */
export interface RecordedAttemptOutcome {
  readonly transactionId: string;
  readonly merchantAccountId: number;
  readonly approved: boolean;
  readonly statusId: number;
  readonly processorTransactionId: string | null;
  readonly authCode: string | null;
  readonly eci: string | null;
  readonly exchange: RawExchange;
  /** Null while the outcome is still open (a 3-D Secure challenge, an unknown answer). */
  readonly completedAt: Date | null;
}

export async function findRecordedAttempt(em: EntityManager, reference: string): Promise<RecordedAttemptOutcome | undefined> {
  const [row] = await em.execute<
    { id: string; merchant_account_id: number; success: boolean; status_id: number; gateway_transaction_id: string | null; auth_code: string | null; eci: string | null; gateway_response: RawExchange | string; completed_at: Date | null }[]
  >(`select id, merchant_account_id, success, status_id, gateway_transaction_id, auth_code, eci, gateway_response, completed_at from transactions where reference = ?`, [reference]);
  if (!row) return undefined;
  return {
    transactionId: row.id,
    merchantAccountId: row.merchant_account_id,
    approved: row.success,
    statusId: row.status_id,
    processorTransactionId: row.gateway_transaction_id,
    authCode: row.auth_code,
    eci: row.eci,
    exchange: typeof row.gateway_response === 'string' ? (JSON.parse(row.gateway_response) as RawExchange) : row.gateway_response,
    completedAt: row.completed_at,
  };
}

/**
 * Records an attempt in one round trip (`routines.record_attempt`): upserts its transaction by reference, so a
 * replayed activity records once (order, tenant, product, customer and partner session come from the submit order),
 * and never over the processor's final word recorded before (`alreadySettled`: nothing changes);
 * with a final answer (`final`) ends the order's reservation on the attempt's account; with an approval not recorded
 * before, counts the amount in the account's approved volume of the month and currency it was reserved in; with
 * `orderState`, settles the order too.
 */
export async function recordAttempt(sql: SqlExecutor, attempt: AuthorizationAttemptRecord & { readonly final: boolean; readonly orderState?: OrderState }): Promise<RecordedAttempt> {
  const account = attempt.merchantAccount;
  const card = attempt.card;
  const [row] = await sql.execute<{ transaction_id: string | null; was_success: boolean | null; already_settled: boolean }[]>(
    `select transaction_id, was_success, already_settled from routines.record_attempt(?::uuid, ?::int, ?::int, ?::text, ?::int, ?::text, ?::text, ?::int, ?::text, ?::boolean,
       ?::numeric, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::int, ?::int, ?::text,
       ?::boolean, ?::jsonb, ?::timestamptz, ?::boolean, ?::text, ?::timestamptz)`,
    [
      randomUUID(), attempt.submitOrderId, account.merchantAccountId, attempt.reference, attempt.attemptNumber, account.gateway,
      attempt.processorTransactionId, attempt.statusId, attempt.status, attempt.approved,
      attempt.amount, attempt.currency, account.mid, account.descriptor || null, attempt.authCode,
      attempt.email, attempt.firstName ?? null, attempt.lastName ?? null, card.bin, card.last4, card.network, card.binCountry ?? null,
      card.fingerprint, card.expiryMonth, card.expiryYear, attempt.eci,
      attempt.sandbox, JSON.stringify(attempt.exchange), attempt.completedAt, attempt.final, attempt.orderState ?? null, attempt.sentAt ?? null,
    ],
  );
  if (!row?.transaction_id) throw new Error(`Attempt ${attempt.reference} not recorded: its order ${attempt.submitOrderId} does not exist`);
  return { transactionId: row.transaction_id, wasApproved: row.was_success === true, alreadySettled: row.already_settled };
}

/**
 * Ends the order's authorization still waiting on its 3-D Secure challenge (recorded as submitted, no completion) with
 * the status the payment ended with: a challenge nobody completed charged nothing. Run again, it changes nothing.
 */
export async function endUncompletedChallenges(sql: SqlExecutor, end: { orderId: number; submittedStatusId: number; statusId: number; status: string }): Promise<void> {
  await sql.execute(
    `update transactions set status_id = ?, status = ?, success = false, completed_at = now()
      where order_id = ? and kind = 'authorization' and status_id = ? and completed_at is null`,
    [end.statusId, end.status, end.orderId, end.submittedStatusId],
  );
}

/** An authorization attempt of an order as recorded: what asking the processor about it again needs. */
export interface OrderAuthorization {
  readonly transactionId: string;
  readonly reference: string;
  readonly attemptNumber: number;
  readonly gateway: string;
  /** Null once its merchant account was deleted. */
  readonly merchantAccountId: number | null;
  readonly approved: boolean;
  readonly statusId: number;
  /** Null while the outcome is open (an answer lost, recorded as 4285 with no completion). */
  readonly completedAt: Date | null;
  /** A successful void refers to it: it charged nothing. */
  readonly voided: boolean;
}

export async function listOrderAuthorizations(em: EntityManager, orderId: number): Promise<OrderAuthorization[]> {
  const rows = await em.execute<
    { id: string; reference: string; attempt_number: number; gateway: string; merchant_account_id: number | null; success: boolean; status_id: number; completed_at: Date | null; voided: boolean }[]
  >(
    `select t.id, t.reference, t.attempt_number, t.gateway, t.merchant_account_id, t.success, t.status_id, t.completed_at,
            exists (select 1 from transactions v where v.original_transaction_id = t.id and v.kind = 'void' and v.success) as voided
       from transactions t where t.order_id = ? and t.kind = 'authorization' order by t.attempt_number`,
    [orderId],
  );
  return rows.map((row) => ({
    transactionId: row.id,
    reference: row.reference,
    attemptNumber: row.attempt_number,
    gateway: row.gateway,
    merchantAccountId: row.merchant_account_id,
    approved: row.success,
    statusId: row.status_id,
    completedAt: row.completed_at,
    voided: row.voided,
  }));
}

/**
 * The processor's word on an attempt recorded without it (its answer lost and the payment ended before an inquiry was
 * answered), learnt late: recorded as `recordAttempt` records a final answer (the reservation ended, an approval counted
 * in its account's volume), from the attempt's own recorded facts. The processor's final word recorded before is kept
 * (`alreadySettled`); undefined when no attempt has this reference.
 */
export async function recordLateAnswer(
  sql: SqlExecutor,
  late: { reference: string; processorTransactionId: string | null; statusId: number; status: string; approved: boolean; authCode: string | null; eci: string | null; exchange: RawExchange },
): Promise<{ alreadySettled: boolean } | undefined> {
  const [row] = await sql.execute<{ already_settled: boolean }[]>(
    `select r.already_settled
       from transactions t
       cross join lateral routines.record_attempt(gen_random_uuid(), t.order_id, t.merchant_account_id, t.reference, t.attempt_number, t.gateway,
         ?::text, ?::int, ?::text, ?::boolean, t.amount, t.currency, t.mid, t.descriptor, ?::text, t.email, t.first_name, t.last_name,
         t.bin, t.last4, t.brand, t.bin_country, t.card_fingerprint, t.expiry_month, t.expiry_year, ?::text,
         t.sandbox, ?::jsonb, now(), true, null::text) r
      where t.reference = ? and t.kind = 'authorization'`,
    [late.processorTransactionId, late.statusId, late.status, late.approved, late.authCode, late.eci, JSON.stringify(late.exchange), late.reference],
  );
  return row && { alreadySettled: row.already_settled };
}
