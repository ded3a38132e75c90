import type { EntityManager } from '@mikro-orm/postgresql';
import type { OrderState } from '../../schema/entities/index.ts';

/**
 * The states in which a subscription holds its e-mail's one claim on the product: the predicate of the unique index
 * `subscriptions_one_live_per_email` (migration 006, and the entity's copy in `schema/entities/order.entity.ts` that the
 * schema-drift test compares), which an insert's conflict target must repeat word for word. `routines.screen_submit`
 * (migration 014) reads the same condition for its early answer.
 */
const LIVE_STATES = "('pending', 'active', 'grace')";

export interface SubscriptionRef {
  readonly orderId: number;
  readonly subscriptionId: number;
}

/** The subscription a submit order created, if it created one. */
export async function findSubscriptionOfSubmitOrder(em: EntityManager, submitOrderId: number): Promise<SubscriptionRef | undefined> {
  const [row] = await em.execute<{ id: number; order_id: number }[]>(
    `select s.id, s.order_id from subscriptions s join orders o on o.id = s.order_id where o.parent_order_id = ? and o.kind = 'subscription'`,
    [submitOrderId],
  );
  return row && { orderId: row.order_id, subscriptionId: row.id };
}

export interface NewSubscription {
  readonly submitOrderId: number;
  readonly email: string;
  readonly state: 'pending' | 'active' | 'grace';
  /** State of the subscription's own order. */
  readonly orderState: OrderState;
  readonly recurringAmount: string;
  readonly nextBillingInDays: number;
  readonly graceUntil: Date | null;
}

/**
 * Creates the subscription's order (a child of the submit order, with its tenant, product, customer and
 * sessions) and the subscription on it, unless the e-mail already holds a live subscription to the product
 * (unique index `subscriptions_one_live_per_email`: a concurrent claim waits for the other and then loses).
 * Undefined when it is held elsewhere. Call within a transaction, after `findSubscriptionOfSubmitOrder`: the
 * submit order's one subscription order is unique, so a second call fails instead of creating another.
 */
export async function insertSubscriptionOfSubmitOrder(em: EntityManager, subscription: NewSubscription): Promise<SubscriptionRef | undefined> {
  const [order] = await em.execute<{ id: number }[]>(
    `insert into orders (tenant_id, product_id, customer_id, kind, parent_order_id, state, amount, currency, partner_session, service_session, mobile_wallet_a, created_at, updated_at)
     select tenant_id, product_id, customer_id, 'subscription', id, ?, ?, currency, partner_session, service_session, mobile_wallet_a, now(), now() from orders where id = ?
     returning id`,
    [subscription.orderState, subscription.recurringAmount, subscription.submitOrderId],
  );
  const [row] = await em.execute<{ id: number }[]>(
    `insert into subscriptions (tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, grace_until, created_at)
     select tenant_id, product_id, customer_id, ?, ?, ?, ?, now() + make_interval(days => ?), ?, now() from orders where id = ?
     on conflict (tenant_id, product_id, lower(email)) where state in ${LIVE_STATES} do nothing
     returning id`,
    [
      order!.id, subscription.email, subscription.state, subscription.recurringAmount, subscription.nextBillingInDays,
      subscription.graceUntil, subscription.submitOrderId,
    ],
  );
  if (row) return { orderId: order!.id, subscriptionId: row.id };
  await em.execute(`delete from orders where id = ?`, [order!.id]);
  return undefined;
}

/**
 * Turns the submit order's pending subscription into an active or grace-period one, with its billing dates and
 * its order's state. A replay finds it no longer pending and changes nothing.
 */
export async function activateSubscriptionOfSubmitOrder(
  em: EntityManager,
  activation: { submitOrderId: number; state: 'active' | 'grace'; orderState: OrderState; nextBillingInSeconds: number; graceUntil: Date | null },
): Promise<void> {
  await em.execute(
    `with activated as (
       update subscriptions s set state = ?, next_billing_at = now() + make_interval(secs => ?), grace_until = ?
         from orders o
        where o.parent_order_id = ? and o.kind = 'subscription' and s.order_id = o.id and s.state = 'pending'
        returning s.order_id)
     update orders set state = ?, updated_at = now() where id in (select order_id from activated)`,
    [activation.state, activation.nextBillingInSeconds, activation.graceUntil, activation.submitOrderId, activation.orderState],
  );
}

/** Gives up the submit order's pending subscription (the charge failed without salvage): the e-mail may subscribe again. */
export async function releasePendingSubscriptionOfSubmitOrder(em: EntityManager, submitOrderId: number): Promise<void> {
  await em.execute(
    `with released as (
       delete from subscriptions s using orders o
        where o.parent_order_id = ? and o.kind = 'subscription' and s.order_id = o.id and s.state = 'pending'
        returning s.order_id)
     delete from orders where id in (select order_id from released)`,
    [submitOrderId],
  );
}

/**
 * Whether the e-mail holds a live subscription to the product (a claim pending its first charge, active, or in grace):
 * the screening's early answer (`routines.screen_submit`), read alone. The payment's own claim, under a unique index,
 * decides for good.
 */
export async function holdsLiveSubscription(em: EntityManager, claim: { tenantId: number; productId: number; email: string }): Promise<boolean> {
  const [row] = await em.execute<{ held: boolean }[]>(
    `select exists (select 1 from subscriptions s
      where s.tenant_id = ? and s.product_id = ? and lower(s.email) = lower(?) and s.state in ${LIVE_STATES}) as held`,
    [claim.tenantId, claim.productId, claim.email],
  );
  return row?.held === true;
}

/**
 * The submit order holding the e-mail's claim on the product's subscription while it waits on a 3-D Secure
 * challenge: its subscription still `pending`, the order `pending_3ds`. Undefined when the claim is held
 * otherwise (a live subscription, a payment still being authorized) or not at all.
 */
export async function findClaimWaitingOnChallenge(
  em: EntityManager,
  claim: { tenantId: number; productId: number; email: string },
): Promise<{ submitOrderId: number } | undefined> {
  const [row] = await em.execute<{ submit_order_id: number }[]>(
    `select submit.id as submit_order_id
       from subscriptions s
       join orders own on own.id = s.order_id
       join orders submit on submit.id = own.parent_order_id
      where s.tenant_id = ? and s.product_id = ? and lower(s.email) = lower(?) and s.state = 'pending' and submit.state = 'pending_3ds'`,
    [claim.tenantId, claim.productId, claim.email],
  );
  return row && { submitOrderId: row.submit_order_id };
}
