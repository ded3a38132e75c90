import type { EntityManager } from '@mikro-orm/postgresql';
import { persistedPartnerSession, type OrderDetails } from '../../domain/payments/payment-input.ts';
import type { OrderState } from '../../schema/entities/index.ts';

/** Order ids come from the orders sequence before the workflow starts, so its id names the order. */
export async function reserveOrderId(em: EntityManager): Promise<number> {
  const [row] = await em.execute<{ id: string }[]>(`select nextval('orders_id_seq') as id`);
  return Number(row!.id);
}

export interface NewSubmitOrder {
  readonly id: number;
  readonly tenantId: number;
  readonly productId: number;
  readonly customerId: number;
  readonly amount: string;
  readonly currency: string;
  readonly workflowId: string;
  readonly campaignId: number | null;
  readonly affiliateId: number | null;
  readonly details: OrderDetails;
}

/** Creates the submit order in `processing` under its reserved id; a replay finds it there and changes nothing. */
export async function insertSubmitOrder(em: EntityManager, order: NewSubmitOrder): Promise<void> {
  const o = order.details;
  await em.execute(
    `insert into orders (id, tenant_id, product_id, customer_id, kind, state, amount, currency, partner_session, service_session, workflow_id,
       campaign_id, affiliate_id, sub_affiliate_primary, sub_affiliate_secondary, tracker_click_id, props, user_agent, ip,
       billing_address, shipping_address, storefront, phone, mobile_wallet_a, created_at, updated_at)
     values (?, ?, ?, ?, 'submit', 'processing', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now())
     on conflict (id) do nothing`,
    [
      order.id, order.tenantId, order.productId, order.customerId, order.amount, order.currency,
      // Stored for correlation only when it fits the 50-character column; the workflow still carries a longer one.
      persistedPartnerSession(o.partnerSession) ?? null, o.serviceSession ?? null, order.workflowId,
      order.campaignId, order.affiliateId, o.subAffiliatePrimary ?? null, o.subAffiliateSecondary ?? null, o.trackerClickId ?? null,
      json(o.props), o.userAgent ?? null, o.ip ?? null, json(o.billingAddress), json(o.shippingAddress), json(o.storefront), o.phone ?? null, o.mobileWalletA,
    ],
  );
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

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
