import type { EntityManager } from '@mikro-orm/postgresql';
import { persistedPartnerSession, type OrderDetails } from '../../domain/payments/payment-input.ts';
import type { CaptureMethod, OrderState, ShownCard, UnprocessedReason } from '../../schema/entities/index.ts';
import type { SqlExecutor } from '../sql-executor.ts';

/** Order ids come from the orders sequence before the workflow starts, so its id names the order. */
export async function reserveOrderId(em: EntityManager): Promise<number> {
  const [row] = await em.execute<{ id: string }[]>(`select nextval('orders_id_seq') as id`);
  return Number(row!.id);
}

export interface NewSubmitOrder {
  readonly id: number;
  readonly tenantId: number;
  readonly productId: number;
  readonly amount: string;
  readonly currency: string;
  readonly workflowId: string;
  readonly email: string;
  readonly details: OrderDetails;
  /** Absent for a payment started by a worker of before (its attempts still show their card). */
  readonly card?: ShownCard;
  /** Absent for a payment started by a worker of before (a capture of it is answered as it always was). */
  readonly captureMethod?: CaptureMethod;
}

/**
 * Opens the submit order in one statement: its customer upserted by e-mail (names and phone kept when none are
 * given), its campaign and affiliate created by name on first use, and the order created in `processing` under its
 * reserved id. A replay finds the order there and changes nothing but the customer's details; `created` says which.
 */
export async function openSubmitOrder(sql: SqlExecutor, order: NewSubmitOrder): Promise<{ created: boolean }> {
  const o = order.details;
  const campaign = o.campaignName?.trim() || null;
  const affiliate = o.affiliateName?.trim() || null;
  const [row] = await sql.execute<{ created: boolean }[]>(
    `with customer as (
       insert into customers (tenant_id, email, first_name, last_name, phone, created_at, updated_at) values (?, ?, ?, ?, ?, now(), now())
       on conflict (tenant_id, email) do update set first_name = coalesce(excluded.first_name, customers.first_name),
         last_name = coalesce(excluded.last_name, customers.last_name), phone = coalesce(excluded.phone, customers.phone), updated_at = now()
       returning id),
     campaign as (
       insert into campaigns (tenant_id, name, created_at) select ?, cast(? as text), now() where cast(? as text) is not null
       on conflict (tenant_id, name) do update set name = excluded.name returning id),
     affiliate as (
       insert into affiliates (tenant_id, name, created_at) select ?, cast(? as text), now() where cast(? as text) is not null
       on conflict (tenant_id, name) do update set name = excluded.name returning id),
     opened as (
       insert into orders (id, tenant_id, product_id, customer_id, amount, currency, partner_session, service_session, workflow_id,
         campaign_id, affiliate_id, sub_affiliate_primary, sub_affiliate_secondary, tracker_click_id, props, user_agent, ip,
         billing_address, shipping_address, storefront, phone, mobile_wallet_a, card, capture_method, created_at, updated_at)
       select ?, ?, ?, customer.id, ?, ?, ?, ?, ?, (select id from campaign), (select id from affiliate), ?, ?, ?, cast(? as jsonb), ?, ?,
         cast(? as jsonb), cast(? as jsonb), cast(? as jsonb), ?, ?, cast(? as jsonb), ?, now(), now()
         from customer
       on conflict (id) do nothing
       returning id)
     select exists (select 1 from opened) as created`,
    [
      order.tenantId, order.email, o.firstName ?? null, o.lastName ?? null, o.phone ?? null,
      order.tenantId, campaign, campaign,
      order.tenantId, affiliate, affiliate,
      order.id, order.tenantId, order.productId, order.amount, order.currency,
      // Stored for correlation only when it fits the 50-character column; the workflow still carries a longer one.
      persistedPartnerSession(o.partnerSession) ?? null, o.serviceSession ?? null, order.workflowId,
      o.subAffiliatePrimary ?? null, o.subAffiliateSecondary ?? null, o.trackerClickId ?? null,
      json(o.props), o.userAgent ?? null, o.ip ?? null, json(o.billingAddress), json(o.shippingAddress), json(o.storefront), o.phone ?? null, o.mobileWalletA,
      json(order.card), order.captureMethod ?? null,
    ],
  );
  return { created: row!.created };
}

/** Sets an order's state; a 3-D Secure id, challenge URL or service session, once recorded, is kept when none is given. */
export async function updateOrderState(
  em: EntityManager,
  change: { orderId: number; state: OrderState; threeDSecureId?: string; challengeUrl?: string; serviceSession?: string },
): Promise<void> {
  await em.execute(
    `update orders set state = ?, three_d_secure_id = coalesce(?, three_d_secure_id), challenge_url = coalesce(?, challenge_url),
       service_session = coalesce(?, service_session), updated_at = now() where id = ?`,
    [change.state, change.threeDSecureId ?? null, change.challengeUrl ?? null, change.serviceSession ?? null, change.orderId],
  );
}

/**
 * Closes a submit order in one statement: its final state, its cap reservation released (if one is still held), and a
 * subscription it claimed but does not keep given up (the pending subscription and its order deleted), so the e-mail
 * may subscribe again. What `settlePaymentOrder` does for a payment that keeps no subscription.
 */
export async function closeSubmitOrder(sql: SqlExecutor, close: { orderId: number; state: OrderState; unprocessedReason?: UnprocessedReason }): Promise<void> {
  await sql.execute(
    // The reservation released is the one the locked row holds: under a concurrent release, a self-join would read
    // the row as the statement's snapshot had it and release that reservation a second time.
    `with payment as (select id, cap_reservation_id, cap_reservation_month, amount, currency from orders where id = ? for update),
     closed as (
       update orders o set state = ?, unprocessed_reason = ?, cap_reservation_id = null, cap_reservation_month = null, updated_at = now()
         from payment p
        where o.id = p.id
        returning p.cap_reservation_id as merchant_account_id, p.cap_reservation_month as month, p.amount, p.currency),
     released as (
       update merchant_account_volumes v set reserved_amount = v.reserved_amount - c.amount
         from closed c
        where v.merchant_account_id = c.merchant_account_id and v.month = c.month and v.currency = c.currency),
     given_up as (
       delete from subscriptions s using orders claim
        where claim.parent_order_id = ? and claim.kind = ? and s.order_id = claim.id and s.state = ?
        returning s.order_id)
     delete from orders where id in (select order_id from given_up)`,
    [close.orderId, close.state, close.unprocessedReason ?? null, close.orderId, 'subscription', 'pending'],
  );
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/**
 * A payment that ended failed (or never ended: terminated) whose approval the processor later confirmed: the order is
 * approved after all. An order in any other state is left as it is.
 */
export async function approveOrderFoundCharged(sql: SqlExecutor, orderId: number): Promise<void> {
  await sql.execute(`update orders set state = 'approved', updated_at = now() where id = ? and state in ('processing', 'failed')`, [orderId]);
}
