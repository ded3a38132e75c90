import type { EntityManager } from '@mikro-orm/postgresql';
import type { MitigationCursor, MitigationFilter, MitigationTransaction } from '../../domain/mitigation/search.ts';

/** The tenant and its child companies: whose transactions a tenant's mitigation search reads. */
export async function searchableCompanyIds(em: EntityManager, tenantId: number): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>(`select id from tenants where id = ? or parent_tenant_id = ? order by id`, [tenantId, tenantId]);
  return rows.map((row) => row.id);
}

/** Which page: by position (REST `pageNumber`) or after a record (GraphQL cursor). */
export type MitigationPage = { readonly offset: number; readonly limit: number } | { readonly after?: MitigationCursor; readonly limit: number };

export interface MitigationRecord extends MitigationTransaction {
  readonly cursor: MitigationCursor;
  readonly productId: number;
  readonly merchantAccountId: number | null;
}

/** A PostgreSQL array literal; elements quoted, so any text is safe inside it. */
function arrayLiteral(values: readonly (string | number)[]): string {
  return `{${values.map((value) => (typeof value === 'number' ? String(Math.trunc(value)) : `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`)).join(',')}}`;
}

class Conditions {
  readonly sql: string[] = [];
  readonly params: unknown[] = [];
  add(sql: string, ...params: unknown[]): void {
    this.sql.push(sql);
    this.params.push(...params);
  }
  /** One value as `=` (the index then also gives the order), several as `= any(array)`. */
  anyOf(column: string, values: readonly (string | number)[] | undefined, type: string): void {
    if (values === undefined) return;
    if (values.length === 1) this.add(`${column} = cast(? as ${type})`, values[0]);
    else this.add(`${column} = any(cast(? as ${type}[]))`, arrayLiteral(values));
  }
}

/** The filter's conditions besides the companies searched (`pageStatement` adds those). */
function conditionsOf(filter: MitigationFilter): Conditions {
  const where = new Conditions();
  where.anyOf('t.email', filter.emails, 'text');
  if (filter.orderIds !== undefined) {
    // The `orderId` a plan's submit answers is its subscription's own order; the checkout's charge is on the submit
    // order that created it, which that id finds too.
    const ids = arrayLiteral(filter.orderIds);
    where.add(
      `t.order_id in (select unnest(cast(? as int[]))
                      union all
                      select so.parent_order_id from orders so where so.id = any(cast(? as int[])) and so.kind = 'subscription')`,
      ids, ids,
    );
  }
  where.anyOf('t.id', filter.transactionIds, 'uuid');
  where.anyOf('t.gateway_transaction_id', filter.gatewayTransactionIds, 'text');
  if (filter.bin !== undefined) where.add('left(t.bin, 6) = ?', filter.bin);
  if (filter.last4 !== undefined) where.add('t.last4 = ?', filter.last4);
  if (filter.firstName !== undefined) where.add('lower(t.first_name) = lower(cast(? as text))', filter.firstName);
  if (filter.lastName !== undefined) where.add('lower(t.last_name) = lower(cast(? as text))', filter.lastName);
  where.anyOf('t.auth_code', filter.authCodes, 'text');
  if (filter.currency !== undefined) where.add('t.currency = ?', filter.currency);
  if (filter.descriptorContains !== undefined) {
    where.add('t.descriptor ilike ?', `%${filter.descriptorContains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  }
  if (filter.sandbox !== undefined) where.add('t.sandbox = ?', filter.sandbox);
  if (filter.applicationIds !== undefined) {
    where.add(`t.product_id in (select ap.id from products ap where ap.application_id = any(cast(? as int[])))`, arrayLiteral(filter.applicationIds));
  }
  where.anyOf('t.product_id', filter.productIds, 'int');
  if (filter.campaignIds !== undefined) {
    where.add(`t.order_id in (select co.id from orders co where co.campaign_id = any(cast(? as int[])))`, arrayLiteral(filter.campaignIds));
  }
  where.anyOf('t.merchant_account_id', filter.merchantAccountIds, 'int');
  if (filter.subscriptionIds !== undefined) {
    // A subscription's transactions are those of its own order, of the submit order that created it, and of its rebills.
    const ids = arrayLiteral(filter.subscriptionIds);
    where.add(
      `t.order_id in (select s.order_id from subscriptions s where s.id = any(cast(? as int[]))
                      union all
                      select so.parent_order_id from subscriptions s join orders so on so.id = s.order_id where s.id = any(cast(? as int[])) and so.parent_order_id is not null
                      union all
                      select r.order_id from rebills r where r.subscription_id = any(cast(? as int[])))`,
      ids, ids, ids,
    );
  }
  where.anyOf('t.amount', filter.amounts, 'numeric');
  return where;
}

/** The authorization period of the filter as a half-open range, when it has one. */
function periodOf(filter: MitigationFilter): { from: Date; to: Date } | undefined {
  if (filter.from === undefined && filter.to === undefined) return undefined;
  return { from: filter.from ?? new Date(0), to: filter.to ?? new Date('9999-12-31T00:00:00Z') };
}

/** Companies searched one by one (each through its own index range); beyond this many, one `= any` scan and a sort. */
const MAX_COMPANY_BRANCHES = 20;

type Part = { readonly sql: string; readonly params: readonly unknown[] };

/**
 * How many ordered branches `pageStatement` cuts a search into: one per company (one for all beyond
 * MAX_COMPANY_BRANCHES), twice that with `includeUpdated` over a period. Each branch reads up to offset + limit index
 * entries, so this times the page's end is the work of choosing the page.
 */
export function pageBranchCount(companyCount: number, filter: MitigationFilter): number {
  const scopes = companyCount <= MAX_COMPANY_BRANCHES ? companyCount : 1;
  return scopes * (filter.includeUpdated && periodOf(filter) ? 2 : 1);
}

/**
 * The ids and times of the page, in the search order. The search is cut into parts an index returns already in that
 * order: one per company (a parent searches its child companies too) and, with `includeUpdated`, the authorizations
 * captured in the period though sent before it apart from those sent in it. Each part is ordered and cut at the page's
 * end on its own, so none reads more than the page needs; the parts never overlap, and their merge is the page.
 */
function pageStatement(companyIds: readonly number[], where: Conditions, filter: MitigationFilter, window: { limit: number; offset: number }): Part {
  const scopes: Part[] =
    companyIds.length <= MAX_COMPANY_BRANCHES
      ? companyIds.map((id) => ({ sql: 't.tenant_id = ?', params: [id] }))
      : [{ sql: 't.tenant_id = any(cast(? as int[]))', params: [arrayLiteral(companyIds)] }];
  const period = periodOf(filter);
  const times: Part[] = !period
    ? [{ sql: '', params: [] }]
    : [
        { sql: 't.sent_at >= ? and t.sent_at < ?', params: [period.from, period.to] },
        // Refunds are transactions of their own and are found by their own time only.
        ...(filter.includeUpdated
          ? [{
              sql: `t.kind = 'authorization' and t.success and t.completed_at >= ? and t.completed_at < ? and not (t.sent_at >= ? and t.sent_at < ?)`,
              params: [period.from, period.to, period.from, period.to],
            }]
          : []),
      ];
  const parts = scopes.flatMap((scope) =>
    times.map((time) => ({ sql: [scope.sql, ...where.sql, time.sql].filter(Boolean).join(' and '), params: [...scope.params, ...where.params, ...time.params] })),
  );
  const select = (part: Part, cut: { limit: number; offset: number }): Part => ({
    sql: `select t.id, t.sent_at from transactions t where ${part.sql} order by t.sent_at desc, t.id desc limit ? offset ?`,
    params: [...part.params, cut.limit, cut.offset],
  });
  if (parts.length === 1) return select(parts[0]!, window);
  const branches = parts.map((part) => select(part, { limit: window.offset + window.limit, offset: 0 }));
  return {
    sql: `select u.id, u.sent_at from (${branches.map((b) => `(${b.sql})`).join(' union all ')}) u order by u.sent_at desc, u.id desc limit ? offset ?`,
    params: [...branches.flatMap((b) => b.params), window.limit, window.offset],
  };
}

type Row = {
  id: string;
  gateway: string;
  order_id: number;
  sent_at: Date;
  sent_micros: string;
  email: string;
  sandbox: boolean;
  application_id: number;
  product_id: number;
  merchant_account_id: number | null;
  status: string;
  status_id: number;
  success: boolean;
  completed_at: Date | null;
  currency: string;
  amount: string;
  mid: string | null;
  descriptor: string | null;
  customer_id: number;
  auth_code: string | null;
  gateway_transaction_id: string | null;
  first_name: string | null;
  last_name: string | null;
  bin: string;
  last4: string;
  refunded: boolean;
  refundable: boolean;
  has_alert: boolean;
  charged_back: boolean;
  original_transaction_id: string | null;
};

/**
 * One page of the mitigation search, newest authorization first and ties by id, so pages neither skip nor repeat.
 * The page is chosen first from the filter's index (ids and times only: an index-only scan when the index covers the
 * filter, so a deep `offset` walks index entries, never table rows), then only that page's rows are read: a deferred
 * join. `refunded`/`refundable` of an original take its successful refunds into account, whoever recorded them.
 */
export async function searchMitigationTransactions(
  em: EntityManager,
  query: { companyIds: readonly number[]; filter: MitigationFilter; page: MitigationPage },
): Promise<MitigationRecord[]> {
  if (query.companyIds.length === 0) return [];
  const where = conditionsOf(query.filter);
  const { page } = query;
  if ('after' in page && page.after) {
    where.add(`(t.sent_at, t.id) < (timestamptz 'epoch' + cast(? as bigint) * interval '1 microsecond', cast(? as uuid))`, page.after.sentMicros, page.after.id);
  }
  const offset = 'offset' in page ? page.offset : 0;
  const chosen = pageStatement(query.companyIds, where, query.filter, { limit: page.limit, offset });
  const rows = await em.execute<Row[]>(
    `with page as materialized (${chosen.sql})
     select t.id, t.gateway, t.order_id, t.sent_at, (extract(epoch from t.sent_at) * 1000000)::bigint::text as sent_micros, t.email, t.sandbox,
            p.application_id, t.product_id, t.merchant_account_id, t.status, t.status_id,
            -- A void moves no money: shown unsuccessful, as its status (4166) is in the status list; its own row keeps
            -- success as "the void went through" for the queries that ask whether an authorization was voided.
            (t.success and t.kind <> 'void') as success, t.completed_at, t.currency, t.amount::text as amount,
            t.mid, t.descriptor, t.customer_id, t.auth_code, t.gateway_transaction_id, t.first_name, t.last_name, left(t.bin, 6) as bin, t.last4,
            (t.refunded or r.refunded_amount > 0) as refunded,
            (t.refundable and t.kind = 'authorization' and t.success and not t.charged_back and r.refunded_amount < t.amount) as refundable,
            t.has_alert, t.charged_back,
            -- Spec 2.8: set on a refund only. A void also refers to the authorization it cancels, but is no refund.
            case when t.kind = 'refund' then t.original_transaction_id end as original_transaction_id
       from page
       join transactions t on t.id = page.id
       join products p on p.id = t.product_id
       cross join lateral (
         select coalesce(sum(rf.amount), 0) as refunded_amount from transactions rf
          where rf.original_transaction_id = t.id and rf.kind = 'refund' and rf.success
       ) r
      order by page.sent_at desc, page.id desc`,
    chosen.params,
  );
  return rows.map(toRecord);
}

function toRecord(row: Row): MitigationRecord {
  return {
    gateway: row.gateway,
    transactionId: row.id,
    orderId: row.order_id,
    sent: new Date(row.sent_at).toISOString(),
    email: row.email,
    sandbox: row.sandbox,
    applicationId: row.application_id,
    status: row.status,
    statusId: row.status_id,
    success: row.success,
    completed: row.completed_at === null ? null : new Date(row.completed_at).toISOString(),
    currency: row.currency,
    // numeric(14,2) as text: at most 2 decimals, so the JSON number is exact to the cent.
    amount: Number(row.amount),
    mid: row.mid,
    descriptor: row.descriptor,
    customerId: row.customer_id,
    authCode: row.auth_code,
    gatewayTransactionId: row.gateway_transaction_id,
    firstName: row.first_name,
    lastName: row.last_name,
    bin: row.bin,
    last4: row.last4,
    refunded: row.refunded,
    refundable: row.refundable,
    hasAlert: row.has_alert,
    chargedBack: row.charged_back,
    originalTransactionId: row.original_transaction_id,
    cursor: { sentMicros: row.sent_micros, id: row.id },
    productId: row.product_id,
    merchantAccountId: row.merchant_account_id,
  };
}

export interface RelatedOrder {
  readonly id: number;
  readonly kind: string;
  readonly state: string;
  readonly amount: number;
  readonly currency: string;
  readonly campaignId: number | null;
  readonly productId: number;
  readonly createdAt: Date;
}

/** Orders by id, in one statement (the GraphQL loaders batch a page's look-ups into it). */
export async function findOrdersByIds(em: EntityManager, ids: readonly number[]): Promise<RelatedOrder[]> {
  const rows = await em.execute<{ id: number; kind: string; state: string; amount: string; currency: string; campaign_id: number | null; product_id: number; created_at: Date }[]>(
    `select id, kind, state, amount::text as amount, currency, campaign_id, product_id, created_at from orders where id = any(cast(? as int[]))`,
    [arrayLiteral(ids)],
  );
  return rows.map((r) => ({ id: r.id, kind: r.kind, state: r.state, amount: Number(r.amount), currency: r.currency, campaignId: r.campaign_id, productId: r.product_id, createdAt: new Date(r.created_at) }));
}

export interface RelatedCustomer {
  readonly id: number;
  readonly email: string;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly phone: string | null;
}

export async function findCustomersByIds(em: EntityManager, ids: readonly number[]): Promise<RelatedCustomer[]> {
  const rows = await em.execute<{ id: number; email: string; first_name: string | null; last_name: string | null; phone: string | null }[]>(
    `select id, email, first_name, last_name, phone from customers where id = any(cast(? as int[]))`,
    [arrayLiteral(ids)],
  );
  return rows.map((r) => ({ id: r.id, email: r.email, firstName: r.first_name, lastName: r.last_name, phone: r.phone }));
}

export interface RelatedSubscription {
  /** The order of the transaction that this subscription belongs to: its own order, the submit order that created it, or a rebill's. */
  readonly transactionOrderId: number;
  readonly id: number;
  readonly state: string;
  readonly email: string;
  readonly recurringAmount: number;
  readonly nextBillingAt: Date;
  readonly createdAt: Date;
}

/**
 * The subscription of each order: one whose own order it is, one created by that submit order, or one that rebilled under it. A submit order may
 * have created several; each order then gets the one with the lowest id (the first created), the same on every read.
 */
export async function findSubscriptionsByOrderIds(em: EntityManager, orderIds: readonly number[]): Promise<RelatedSubscription[]> {
  const ids = arrayLiteral(orderIds);
  const rows = await em.execute<{ transaction_order_id: number; id: number; state: string; email: string; recurring_amount: string; next_billing_at: Date; created_at: Date }[]>(
    `select distinct on (transaction_order_id) * from (
       select s.order_id as transaction_order_id, s.id, s.state, s.email, s.recurring_amount::text as recurring_amount, s.next_billing_at, s.created_at
         from subscriptions s where s.order_id = any(cast(? as int[]))
       union all
       select o.parent_order_id, s.id, s.state, s.email, s.recurring_amount::text, s.next_billing_at, s.created_at
         from orders o join subscriptions s on s.order_id = o.id where o.parent_order_id = any(cast(? as int[]))
       union all
       select r.order_id, s.id, s.state, s.email, s.recurring_amount::text, s.next_billing_at, s.created_at
         from rebills r join subscriptions s on s.id = r.subscription_id where r.order_id = any(cast(? as int[]))
     ) found
     order by transaction_order_id, id`,
    [ids, ids, ids],
  );
  return rows.map((r) => ({
    transactionOrderId: r.transaction_order_id,
    id: r.id,
    state: r.state,
    email: r.email,
    recurringAmount: Number(r.recurring_amount),
    nextBillingAt: new Date(r.next_billing_at),
    createdAt: new Date(r.created_at),
  }));
}
