import type { EntityManager } from '@mikro-orm/postgresql';
import type { OrderState } from '../../schema/entities/index.ts';

export interface SubscriptionRef {
  readonly orderId: number;
  readonly subscriptionId: number;
}

/** Whether the e-mail holds an active (or grace-period) subscription to the product. */
export async function hasLiveSubscription(em: EntityManager, holder: { tenantId: number; productId: number; email: string }): Promise<boolean> {
  const [row] = await em.execute(
    `select 1 from subscriptions where tenant_id = ? and product_id = ? and email = ? and state in ('active', 'grace') limit 1`,
    [holder.tenantId, holder.productId, holder.email],
  );
  return row !== undefined;
}

/** The subscription a submit order created, if it created one. */
export async function findSubscriptionOfSubmitOrder(em: EntityManager, submitOrderId: number): Promise<SubscriptionRef | undefined> {
  const [row] = await em.execute<{ id: number; order_id: number }[]>(
    `select s.id, s.order_id from subscriptions s join orders o on o.id = s.order_id where o.parent_order_id = ?`,
    [submitOrderId],
  );
  return row && { orderId: row.order_id, subscriptionId: row.id };
}

export interface NewSubscription {
  readonly submitOrderId: number;
  readonly email: string;
  readonly state: 'active' | 'grace';
  /** State of the subscription's own order. */
  readonly orderState: OrderState;
  readonly recurringAmount: string;
  readonly nextBillingInDays: number;
  readonly graceUntil: Date | null;
}

/**
 * Creates the subscription's order (a child of the submit order, with its tenant, product, customer and
 * sessions) and the subscription on it. Call within a transaction, after `findSubscriptionOfSubmitOrder`.
 */
export async function insertSubscriptionOfSubmitOrder(em: EntityManager, subscription: NewSubscription): Promise<SubscriptionRef> {
  const [order] = await em.execute<{ id: number }[]>(
    `insert into orders (tenant_id, product_id, customer_id, kind, parent_order_id, state, amount, currency, partner_session, service_session, mobile_wallet_a, created_at, updated_at)
     select tenant_id, product_id, customer_id, 'subscription', id, ?, ?, currency, partner_session, service_session, mobile_wallet_a, now(), now() from orders where id = ?
     returning id`,
    [subscription.orderState, subscription.recurringAmount, subscription.submitOrderId],
  );
  const [row] = await em.execute<{ id: number }[]>(
    `insert into subscriptions (tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, grace_until, created_at)
     select tenant_id, product_id, customer_id, ?, ?, ?, ?, now() + make_interval(days => ?), ?, now() from orders where id = ?
     returning id`,
    [
      order!.id, subscription.email, subscription.state, subscription.recurringAmount, subscription.nextBillingInDays,
      subscription.graceUntil, subscription.submitOrderId,
    ],
  );
  return { orderId: order!.id, subscriptionId: row!.id };
}
