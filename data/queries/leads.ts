import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlExecutor } from '../sql-executor.ts';
import { DomainError } from '../../domain/errors.ts';
import { LEAD_LIMITS, type LeadPayment, type LeadRecord, type LeadScan, type LeadStatus, type LeadWrite } from '../../domain/leads/lead.ts';
import { SANDBOX_GATEWAY, type LeadEnvironment } from '../../domain/leads/lead-keys.ts';
import type { LeadFilter, LeadCursor } from '../../domain/leads/lead-query.ts';

/** A lead row as the driver gives it: timestamps arrive as text. */
interface LeadRow {
  id: string;
  session_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  scans: LeadScan[];
  pending_data: Record<string, unknown> | null;
  tracking_fields: Record<string, string>;
  status: LeadStatus;
  application_id: number;
  environment: LeadEnvironment;
  transaction_id: string | null;
  order_id: number | null;
  amount: string | null;
  currency: string | null;
  subscription_id: number | null;
  paid_at: string | null;
  created_at: string;
  updated_at: string;
  /** `updated_at` as PostgreSQL prints it: microseconds, which a Date would lose, for exact keyset cursors. */
  updated_at_text: string;
}

/** Every column of a lead but the tenant, which no caller ever sees. */
const LEAD_COLUMNS = `l.id, l.session_id, l.email, l.first_name, l.last_name, l.phone, l.scans, l.pending_data, l.tracking_fields, l.status,
  l.application_id, l.environment, l.transaction_id, l.order_id, l.amount, l.currency, l.subscription_id, l.paid_at, l.created_at, l.updated_at,
  l.updated_at::text as updated_at_text`;

const toRecord = (row: LeadRow): LeadRecord & { cursor: LeadCursor } => ({
  id: row.id,
  sessionId: row.session_id,
  email: row.email,
  firstName: row.first_name,
  lastName: row.last_name,
  phone: row.phone,
  scans: row.scans,
  pendingData: row.pending_data,
  trackingFields: row.tracking_fields,
  status: row.status,
  applicationId: row.application_id,
  environment: row.environment,
  transactionId: row.transaction_id,
  orderId: row.order_id,
  amount: row.amount,
  currency: row.currency,
  subscriptionId: row.subscription_id,
  paidAt: row.paid_at === null ? null : new Date(row.paid_at),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
  cursor: { updatedAt: row.updated_at_text, id: row.id },
});

export interface UpsertedLead {
  readonly id: string;
  readonly sessionId: string;
  readonly status: LeadStatus;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly created: boolean;
}

/** The SQLSTATE `routines.merge_tracking_fields` refuses a write with that would give a lead too many CFA/D2D fields. */
const TOO_MANY_TRACKING_FIELDS = 'LD001';

/**
 * Creates the tenant's lead of this session or updates it, in one statement (`routines.upsert_lead`, whose plan
 * PostgreSQL keeps for the session): parallel writes of one session meet in `on conflict` and never make two.
 * Absent optional fields keep their stored values; CFA/D2D fields merge, up to `LEAD_LIMITS.trackingFields` in all (a
 * write adding more is refused: a validation `DomainError`).
 * Undefined when the session's lead belongs to another application or environment of the tenant (not changed).
 */
export async function upsertLead(
  em: SqlExecutor,
  input: { id: string; tenantId: number; applicationId: number; environment: LeadEnvironment; lead: LeadWrite },
): Promise<UpsertedLead | undefined> {
  const { lead } = input;
  const rows = em.execute<{ id: string; session_id: string; status: LeadStatus; created_at: string; updated_at: string; created: boolean }[]>(
    `select * from routines.upsert_lead(?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb)`,
    [
      input.id,
      input.tenantId,
      input.applicationId,
      input.environment,
      lead.sessionId,
      lead.email,
      lead.firstName ?? null,
      lead.lastName ?? null,
      lead.phone ?? null,
      lead.scans ? JSON.stringify(lead.scans) : null,
      lead.pendingData ? JSON.stringify(lead.pendingData) : null,
      JSON.stringify(lead.trackingFields),
    ],
  );
  const [row] = await rows.catch((error: unknown) => {
    // `routines.merge_tracking_fields` (migration 025): the write would give the lead more fields than it may hold.
    if ((error as { code?: unknown } | null)?.code === TOO_MANY_TRACKING_FIELDS) {
      throw new DomainError('validation', `a lead holds at most ${LEAD_LIMITS.trackingFields} fields, this write would add more`, { field: 'cfa_*/d2d_*' });
    }
    throw error;
  });
  return row && { id: row.id, sessionId: row.session_id, status: row.status, createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at), created: row.created };
}

/**
 * A tenant's leads matching every given filter, most recently updated first (ties by id), after the cursor when
 * one is given; of one environment when it is given (a lead key reads its own). Each filter has an index
 * `(tenant_id, <filter>, updated_at desc, id desc)`, the environment alone `(tenant_id, environment, updated_at desc,
 * id desc)`: a test key of a shop with a million live leads reads its few test ones without passing the rest.
 */
export async function listLeads(
  em: EntityManager,
  input: { tenantId: number; environment?: LeadEnvironment; filter: LeadFilter; limit: number; after?: LeadCursor },
): Promise<(LeadRecord & { cursor: LeadCursor })[]> {
  const conditions = ['l.tenant_id = ?'];
  const params: unknown[] = [input.tenantId];
  const { filter } = input;
  const equal = (column: string, value: unknown) => {
    if (value === undefined) return;
    conditions.push(`l.${column} = ?`);
    params.push(value);
  };
  equal('environment', input.environment);
  equal('id', filter.id);
  // Whatever its case, as payments and the mitigation search match e-mails (index on lower(email)).
  if (filter.email !== undefined) {
    conditions.push('lower(l.email) = lower(?)');
    params.push(filter.email);
  }
  equal('session_id', filter.sessionId);
  equal('transaction_id', filter.transactionId);
  equal('subscription_id', filter.subscriptionId);
  equal('status', filter.status);
  if (input.after) {
    conditions.push('(l.updated_at, l.id) < (?::timestamptz, ?::uuid)');
    params.push(input.after.updatedAt, input.after.id);
  }
  const rows = await em.execute<LeadRow[]>(
    `select ${LEAD_COLUMNS} from customer_leads l where ${conditions.join(' and ')} order by l.updated_at desc, l.id desc limit ?`,
    [...params, input.limit],
  );
  return rows.map(toRecord);
}

/** Where a successful payment happened: what a lead must match to become paid (DESIGN 4, paid matching). */
export interface PaidLeadMatch {
  readonly tenantId: number;
  readonly productId: number;
  readonly merchantAccountId: number;
  readonly sessionId: string;
}

/**
 * Marks the matching lead paid with this payment's identifiers, only if it is not paid yet: one conditional update,
 * so two payments of one session never both win and a paid lead keeps its first payment. The application is the
 * product's; the environment is the merchant account's (its gateway). Undefined when nothing changed.
 * `waitForLock: false`: a lead row another transaction holds fails the statement at once (`lock_not_available`)
 * instead of waiting for it, for a caller that has a later chance to mark it.
 */
export async function markLeadPaidIfUnpaid(em: EntityManager, match: PaidLeadMatch, payment: LeadPayment, options: { waitForLock: boolean } = { waitForLock: true }): Promise<LeadRecord | undefined> {
  // `for no key update`: the lock the plain update took (no key column changes), taken first so that it can be `nowait`.
  const [row] = await em.execute<LeadRow[]>(
    `update customer_leads l
        set status = 'paid', transaction_id = ?, order_id = ?, amount = ?, currency = ?, subscription_id = ?, paid_at = ?, updated_at = now()
       from (select unpaid.id
               from customer_leads unpaid, products p, merchant_accounts m
              where p.id = ? and p.tenant_id = ? and m.id = ? and m.tenant_id = ?
                and unpaid.tenant_id = p.tenant_id and unpaid.application_id = p.application_id
                and unpaid.environment = case when m.gateway = ? then 'test' else 'live' end
                and unpaid.session_id = ? and unpaid.status <> 'paid'
                for no key update of unpaid${options.waitForLock ? '' : ' nowait'}) matched
      where l.id = matched.id
      returning ${LEAD_COLUMNS}`,
    [
      payment.transactionId,
      payment.orderId,
      payment.amount,
      payment.currency,
      payment.subscriptionId,
      payment.paidAt,
      match.productId,
      match.tenantId,
      match.merchantAccountId,
      match.tenantId,
      SANDBOX_GATEWAY,
      match.sessionId,
    ],
  );
  return row && toRecord(row);
}

/** The tenant's lead of this session if this very transaction made it paid (a retried marking finds its own work). */
export async function findLeadPaidBy(em: EntityManager, input: { tenantId: number; sessionId: string; transactionId: string }): Promise<LeadRecord | undefined> {
  const [row] = await em.execute<LeadRow[]>(
    `select ${LEAD_COLUMNS} from customer_leads l where l.tenant_id = ? and l.session_id = ? and l.status = 'paid' and l.transaction_id = ?`,
    [input.tenantId, input.sessionId, input.transactionId],
  );
  return row && toRecord(row);
}

/** The first successful charge of a checkout session a lead of this application and environment would match. */
export interface EarlierPayment {
  readonly match: PaidLeadMatch;
  readonly payment: Omit<LeadPayment, 'paidAt'>;
  /** How long ago the processor approved its charge (sent it, for an approval recorded without that time), by the database's clock. */
  readonly chargedSecondsAgo: number;
}

/**
 * The session's first charged payment (order `approved`, its approved authorization on an account of the lead's
 * environment, for a product of the lead's application), with the identifiers its own marking gives a lead: the
 * processor's transaction id, the subscription's order and id when the checkout created one (the subscription a
 * salvaged checkout's retry paid for). Undefined when there is none. Uses `orders (tenant_id, partner_session)`.
 */
export async function findFirstPaymentOfSession(
  em: EntityManager,
  lead: { tenantId: number; applicationId: number; environment: LeadEnvironment; sessionId: string },
): Promise<EarlierPayment | undefined> {
  const [row] = await em.execute<
    { product_id: number; merchant_account_id: number; transaction_id: string; order_id: number; amount: string; currency: string; subscription_id: number | null; charged_seconds_ago: number }[]
  >(
    `select o.product_id, t.merchant_account_id, t.gateway_transaction_id as transaction_id, coalesce(own.id, o.id) as order_id,
            o.amount::text as amount, o.currency, coalesce(s.id, r.subscription_id) as subscription_id,
            extract(epoch from now() - coalesce(t.completed_at, t.sent_at))::float8 as charged_seconds_ago
       from orders o
       join products p on p.id = o.product_id
       join transactions t on t.order_id = o.id and t.kind = 'authorization' and t.success and t.gateway_transaction_id is not null
       join merchant_accounts m on m.id = t.merchant_account_id
       left join orders own on own.parent_order_id = o.id and own.kind = 'subscription'
       left join subscriptions s on s.order_id = own.id
       -- A salvaged checkout's retry (a rebill of period 0) names the subscription it pays for, as its own marking does.
       left join rebills r on r.order_id = o.id
      where o.tenant_id = ? and o.partner_session = ? and o.state = 'approved' and p.application_id = ?
        and (case when m.gateway = ? then 'test' else 'live' end) = ?
      order by t.completed_at, t.id
      limit 1`,
    [lead.tenantId, lead.sessionId, lead.applicationId, SANDBOX_GATEWAY, lead.environment],
  );
  if (!row) return undefined;
  return {
    match: { tenantId: lead.tenantId, productId: row.product_id, merchantAccountId: row.merchant_account_id, sessionId: lead.sessionId },
    payment: { transactionId: row.transaction_id, orderId: row.order_id, amount: row.amount, currency: row.currency, subscriptionId: row.subscription_id },
    chargedSecondsAgo: row.charged_seconds_ago,
  };
}
