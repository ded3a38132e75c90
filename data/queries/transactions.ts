import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
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
  /** Null while the outcome is still open (a 3-D Secure challenge, an unknown answer). */
  readonly completedAt: Date | null;
}

export interface RecordedAttempt {
  readonly transactionId: string;
  /** Whether an earlier recording of this attempt (a replayed activity) was already an approval. */
  readonly wasApproved: boolean;
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
 * Upserts the attempt's transaction by its reference, so a replayed activity records once; order, tenant,
 * product, customer and partner session come from the submit order.
 */
export async function recordAuthorizationAttempt(em: EntityManager, attempt: AuthorizationAttemptRecord): Promise<RecordedAttempt> {
  const account = attempt.merchantAccount;
  const card = attempt.card;
  const [row] = await em.execute<{ id: string; was_success: boolean | null }[]>(
    `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
       gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, auth_code, email, first_name, last_name,
       bin, last4, brand, bin_country, card_fingerprint, expiry_month, expiry_year, eci, partner_session, sandbox, refundable, gateway_response, sent_at, completed_at)
     select ?, o.tenant_id, o.id, o.product_id, o.customer_id, ?, 'authorization', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, o.partner_session, ?, ?, ?, now(), ?
       from orders o where o.id = ?
     on conflict (reference) do update set gateway_transaction_id = coalesce(excluded.gateway_transaction_id, transactions.gateway_transaction_id),
       status_id = excluded.status_id, status = excluded.status, success = excluded.success, auth_code = excluded.auth_code, eci = excluded.eci,
       refundable = excluded.refundable, gateway_response = excluded.gateway_response, completed_at = excluded.completed_at
     returning id, (select previous.success from transactions previous where previous.reference = ?) as was_success`,
    [
      randomUUID(), account.merchantAccountId, attempt.reference, attempt.attemptNumber, account.gateway,
      attempt.processorTransactionId, attempt.statusId, attempt.status, attempt.approved,
      attempt.amount, attempt.currency, account.mid, account.descriptor || null, attempt.authCode,
      attempt.email, attempt.firstName ?? null, attempt.lastName ?? null, card.bin, card.last4, card.network, card.binCountry ?? null,
      card.fingerprint, card.expiryMonth, card.expiryYear, attempt.eci,
      attempt.sandbox, attempt.approved, JSON.stringify(attempt.exchange), attempt.completedAt, attempt.submitOrderId, attempt.reference,
    ],
  );
  // RETURNING's subquery sees the row as it was before this statement.
  return { transactionId: row!.id, wasApproved: row!.was_success === true };
}
