import type { EntityManager } from '@mikro-orm/postgresql';
import { normalizeEmail } from '../../domain/payments/card.ts';
import type { CaptureMethod, OrderState, ShownCard, UnprocessedReason } from '../../schema/entities/index.ts';
import { THREE_DECIMAL_CURRENCIES, ZERO_DECIMAL_CURRENCIES } from '../../domain/payments-api/minor-units.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';

/** The product the generic `/payments` API books a payment under when the caller names none. */
export const PAYMENTS_API_PRODUCT_SLUG = 'payments-api';

/**
 * The tenant's `payments-api` product, created on first use in its `default` application, or in its first one when
 * it was provisioned with named applications only (one statement, so concurrent first payments meet in
 * `on conflict`). A tenant may provision it itself, in the application it chooses, to set its velocity limits.
 */
export async function ensurePaymentsApiProduct(em: EntityManager, tenantId: number): Promise<number> {
  await em.execute(
    `insert into products (tenant_id, application_id, slug, name, price, currency, created_at, updated_at)
     select a.tenant_id, a.id, ?, 'Payments API', 0, 'USD', now(), now() from applications a where a.tenant_id = ?
     order by a.slug = 'default' desc, a.id limit 1
     on conflict (tenant_id, slug) do nothing`,
    [PAYMENTS_API_PRODUCT_SLUG, tenantId],
  );
  const [row] = await em.execute<{ id: number }[]>(`select id from products where tenant_id = ? and slug = ?`, [tenantId, PAYMENTS_API_PRODUCT_SLUG]);
  // Provisioning gives every tenant an application: none is a broken tenant, not the caller's request.
  if (!row) throw new Error(`Tenant ${tenantId} has no application to hold the payments-api product`);
  return row.id;
}

/** The latest authorization attempt of a payment (an approval before any decline of the same payment). */
export interface PaymentAttemptRecord {
  readonly transactionId: string;
  /**
   * The attempt's status (a capture writes its own on the authorization). A canceled payment whose held
   * authorization has a `void` transaction shows the void's: 4166 voided, or the processor's refusal (4175) of a
   * void whose hold then ended expired, as its `transaction.updated` webhook says (not 3367 Preauthorized).
   */
  readonly statusId: number;
  readonly status: string;
  readonly success: boolean;
  readonly mid: string | null;
  readonly merchantAccountId: number | null;
  readonly processorTransactionId: string | null;
  readonly refundedAmount: string;
  readonly refundReservedAmount: string;
}

/** A payment as the generic API shows it: its submit order, customer e-mail and deciding attempt. */
export interface PaymentRecord {
  readonly orderId: number;
  readonly state: OrderState;
  readonly amount: string;
  readonly currency: string;
  readonly createdAt: Date;
  readonly productId: number;
  readonly email: string;
  readonly threeDSecureId: string | null;
  /** What the caller kept on the payment (`metadata`, or a submit's `props`), as given. */
  readonly metadata: PaymentMetadata;
  readonly attempt: PaymentAttemptRecord | null;
  /** The card as its deciding attempt shows it, else as the order kept it (none for an order opened before it did). */
  readonly card: ShownCard | null;
  /** How it takes its money; null for an order opened before this was kept. */
  readonly captureMethod: CaptureMethod | null;
  /** Why it failed before any processor was asked; null for one that was sent, or closed before this was kept. */
  readonly unprocessedReason: UnprocessedReason | null;
}

/** Key-value pairs a caller keeps on a payment: text from `/payments`, also numbers, booleans and null from a submit. */
export type PaymentMetadata = Readonly<Record<string, string | number | boolean | null>>;

export interface PaymentListFilter {
  readonly states?: readonly OrderState[];
  readonly createdFrom?: Date;
  /** Exclusive, in Unix seconds: created before this instant (a number, so the day after year 9999's last one still is one). */
  readonly createdBeforeSeconds?: number;
  /** Decimal strings. */
  /** Bounds in each payment's own minor units (500 is 500 JPY, 5.00 USD, 0.500 KWD). */
  readonly amountFrom?: number;
  readonly amountTo?: number;
  readonly email?: string;
  readonly mid?: string;
  /** Only payments older than this one (cursor). */
  readonly beforeOrderId?: number;
}

interface PaymentRow {
  id: number;
  state: OrderState;
  amount: string;
  currency: string;
  created_at: Date;
  product_id: number;
  three_d_secure_id: string | null;
  props: PaymentMetadata | null;
  card: ShownCard | null;
  capture_method: CaptureMethod | null;
  unprocessed_reason: UnprocessedReason | null;
  email: string;
  transaction_id: string | null;
  status_id: number | null;
  status: string | null;
  success: boolean | null;
  mid: string | null;
  merchant_account_id: number | null;
  gateway_transaction_id: string | null;
  bin: string | null;
  last4: string | null;
  brand: string | null;
  expiry_month: number | null;
  expiry_year: number | null;
  refunded_amount: string | null;
  refund_reserved_amount: string | null;
}

/**
 * A void stays its own transaction (spec 2.8: kind `void`, referring to the authorization), so a canceled payment
 * (order `voided` or `expired`) reads its status there while the authorization still says Preauthorized (3367); a hold
 * whose end the processor told (`endHold`) keeps that status on the authorization, which then says how it ended.
 */
const SELECT_PAYMENTS = `
  select o.id, o.state, o.amount, o.currency, o.created_at, o.product_id, o.three_d_secure_id, o.props, o.card, o.capture_method, o.unprocessed_reason, c.email,
         t.id as transaction_id,
         case when t.status_id = ${StatusId.PREAUTHORIZED} then coalesce(v.status_id, t.status_id) else t.status_id end as status_id,
         case when t.status_id = ${StatusId.PREAUTHORIZED} then coalesce(v.status, t.status) else t.status end as status, t.success, t.mid,
         t.merchant_account_id, t.gateway_transaction_id, t.bin, t.last4, t.brand, t.expiry_month, t.expiry_year, t.refunded_amount, t.refund_reserved_amount
    from orders o
    join customers c on c.id = o.customer_id
    left join lateral (
      select * from transactions t where t.order_id = o.id and t.kind = 'authorization' order by t.success desc, t.attempt_number desc limit 1
    ) t on true
    left join lateral (
      select v.status_id, v.status from transactions v
       where o.state in ('voided', 'expired') and v.original_transaction_id = t.id and v.kind = 'void'
       order by v.sent_at desc limit 1
    ) v on true`;

/** One payment of the tenant; another tenant's payment is not found, exactly like a missing one. */
export async function findPayment(em: EntityManager, tenantId: number, orderId: number): Promise<PaymentRecord | undefined> {
  const [row] = await em.execute<PaymentRow[]>(`${SELECT_PAYMENTS} where o.id = ? and o.tenant_id = ? and o.kind = 'submit'`, [orderId, tenantId]);
  return row && toRecord(row);
}

/** The tenant's payments matching every given filter, newest first. */
export async function listPayments(em: EntityManager, tenantId: number, filter: PaymentListFilter, limit: number): Promise<PaymentRecord[]> {
  const where = [`o.tenant_id = ?`, `o.kind = 'submit'`];
  const params: unknown[] = [tenantId];
  if (filter.states) {
    where.push(`o.state in (${filter.states.map(() => '?').join(', ')})`);
    params.push(...filter.states);
  }
  if (filter.createdFrom) (where.push(`o.created_at >= ?`), params.push(filter.createdFrom));
  if (filter.createdBeforeSeconds !== undefined) (where.push(`o.created_at < to_timestamp(?)`), params.push(filter.createdBeforeSeconds));
  // Minor units are the currency's own (a list may hold several): each payment's amount is compared in its units.
  const inMinorUnits = `o.amount * (case when o.currency = any(cast(? as text[])) then 1 when o.currency = any(cast(? as text[])) then 1000 else 100 end)`;
  const currencyDigits = [`{${ZERO_DECIMAL_CURRENCIES.join(',')}}`, `{${THREE_DECIMAL_CURRENCIES.join(',')}}`];
  if (filter.amountFrom !== undefined) (where.push(`${inMinorUnits} >= cast(? as numeric)`), params.push(...currencyDigits, String(filter.amountFrom)));
  if (filter.amountTo !== undefined) (where.push(`${inMinorUnits} <= cast(? as numeric)`), params.push(...currencyDigits, String(filter.amountTo)));
  // Customers are stored with their e-mail as the submit keeps it (`normalizeEmail`), compared so: the unique
  // (tenant, email) index finds them, and PostgreSQL's `lower()` would disagree with JavaScript's on a final `Σ`.
  if (filter.email) (where.push(`c.tenant_id = o.tenant_id and c.email = ?`), params.push(normalizeEmail(filter.email)));
  if (filter.mid) (where.push(`t.mid = ?`), params.push(filter.mid));
  if (filter.beforeOrderId) (where.push(`o.id < ?`), params.push(filter.beforeOrderId));
  const rows = await em.execute<PaymentRow[]>(`${SELECT_PAYMENTS} where ${where.join(' and ')} order by o.id desc limit ?`, [...params, limit]);
  return rows.map(toRecord);
}

function toRecord(row: PaymentRow): PaymentRecord {
  return {
    orderId: row.id,
    state: row.state,
    amount: row.amount,
    currency: row.currency,
    createdAt: new Date(row.created_at),
    productId: row.product_id,
    email: row.email,
    threeDSecureId: row.three_d_secure_id,
    metadata: row.props ?? {},
    captureMethod: row.capture_method,
    unprocessedReason: row.unprocessed_reason,
    card:
      row.transaction_id === null
        ? row.card
        : { brand: row.brand!, bin: row.bin!, last4: row.last4!, expiryMonth: row.expiry_month!, expiryYear: row.expiry_year! },
    attempt:
      row.transaction_id === null
        ? null
        : {
            transactionId: row.transaction_id,
            statusId: row.status_id!,
            status: row.status!,
            success: row.success!,
            mid: row.mid,
            merchantAccountId: row.merchant_account_id,
            processorTransactionId: row.gateway_transaction_id,
            refundedAmount: row.refunded_amount!,
            refundReservedAmount: row.refund_reserved_amount!,
          },
  };
}
