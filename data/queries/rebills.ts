import type { EntityManager } from '@mikro-orm/postgresql';
import type { SubscriptionPlan } from '../../domain/catalog/product.ts';
import type { PauseReason } from '../../domain/subscriptions/pause-reason.ts';

/**
 * What a rebill needs: the subscription's product, plan, price, customer and sealed card (never a CVV). The currency is
 * the subscription's own (its order's, as subscribed), not the product's today: a product provisioned again in another
 * currency does not change what its subscribers pay.
 */
export interface RebillSubject {
  readonly subscriptionId: number;
  readonly tenantId: number;
  readonly productId: number;
  readonly email: string;
  readonly currency: string;
  readonly recurringAmount: string;
  /** What the checkout charged (its submit order's amount): a salvaged first charge is retried at this price. */
  readonly firstChargeAmount: string;
  /** The checkout's `partnerSession` (its lead's `session_id`), if it had one. */
  readonly checkoutPartnerSession: string | null;
  readonly state: 'pending' | 'active' | 'grace' | 'cancelled';
  /** Why a cancelled subscription ended (`cancelled_by_merchant` for one cancelled while no billing workflow ran). */
  readonly cancelReason: string | null;
  readonly plan: SubscriptionPlan | null;
  readonly sealedCard: string | null;
  readonly billedPeriods: number;
  readonly paused: boolean;
}

export async function findRebillSubject(em: EntityManager, subscriptionId: number): Promise<RebillSubject | undefined> {
  const [row] = await em.execute<
    {
      id: number;
      tenant_id: number;
      product_id: number;
      email: string;
      currency: string;
      recurring_amount: string;
      first_charge_amount: string;
      checkout_partner_session: string | null;
      state: RebillSubject['state'];
      cancel_reason: string | null;
      subscription_plan: SubscriptionPlan | null;
      sealed_card: string | null;
      billed_periods: number;
      paused_at: Date | null;
    }[]
  >(
    `select s.id, s.tenant_id, s.product_id, s.email, o.currency, s.recurring_amount, coalesce(submit.amount, s.recurring_amount) as first_charge_amount,
            submit.partner_session as checkout_partner_session, s.state, s.cancel_reason, p.subscription_plan, s.sealed_card, s.billed_periods, s.paused_at
       from subscriptions s join products p on p.id = s.product_id join orders o on o.id = s.order_id
       left join orders submit on submit.id = o.parent_order_id
      where s.id = ?`,
    [subscriptionId],
  );
  return (
    row && {
      subscriptionId: row.id,
      tenantId: row.tenant_id,
      productId: row.product_id,
      email: row.email,
      currency: row.currency,
      recurringAmount: row.recurring_amount,
      firstChargeAmount: row.first_charge_amount,
      checkoutPartnerSession: row.checkout_partner_session,
      state: row.state,
      cancelReason: row.cancel_reason,
      plan: row.subscription_plan,
      sealedCard: row.sealed_card,
      billedPeriods: row.billed_periods,
      paused: row.paused_at !== null,
    }
  );
}

/** The subscription of a tenant (REST and GraphQL reads); another tenant's is not found. */
export interface SubscriptionView {
  readonly id: number;
  readonly productId: number;
  readonly email: string;
  readonly state: string;
  readonly recurringAmount: string;
  readonly currency: string;
  readonly billedPeriods: number;
  readonly nextBillingAt: Date;
  readonly graceUntil: Date | null;
  readonly pausedAt: Date | null;
  readonly pauseReason: PauseReason | null;
  readonly cancelledAt: Date | null;
  readonly cancelReason: string | null;
  readonly createdAt: Date;
}

export async function findTenantSubscription(em: EntityManager, tenantId: number, subscriptionId: number): Promise<SubscriptionView | undefined> {
  const [row] = await em.execute<Record<string, unknown>[]>(
    `select s.id, s.product_id, s.email, s.state, s.recurring_amount, o.currency, s.billed_periods, s.next_billing_at, s.grace_until, s.paused_at, s.pause_reason, s.cancelled_at, s.cancel_reason, s.created_at
       from subscriptions s join orders o on o.id = s.order_id where s.id = ? and s.tenant_id = ?`,
    [subscriptionId, tenantId],
  );
  if (!row) return undefined;
  const date = (value: unknown) => (value === null ? null : new Date(value as string));
  return {
    id: row.id as number,
    productId: row.product_id as number,
    email: row.email as string,
    state: row.state as string,
    recurringAmount: row.recurring_amount as string,
    currency: row.currency as string,
    billedPeriods: row.billed_periods as number,
    nextBillingAt: new Date(row.next_billing_at as string),
    graceUntil: date(row.grace_until),
    pausedAt: date(row.paused_at),
    pauseReason: (row.pause_reason as PauseReason | null) ?? null,
    cancelledAt: date(row.cancelled_at),
    cancelReason: (row.cancel_reason as string | null) ?? null,
    createdAt: new Date(row.created_at as string),
  };
}

/** Keeps the card for a subscription's rebills, once, and never on one that has ended (its card is not kept). */
export async function storeRebillCard(em: EntityManager, subscriptionId: number, sealedCard: string): Promise<void> {
  await em.execute(`update subscriptions set sealed_card = ? where id = ? and sealed_card is null and state <> 'cancelled'`, [sealedCard, subscriptionId]);
}

/**
 * The order of one charge of a billing period (`attempt` 0 first, then each dunning retry): taken from the orders
 * sequence once and kept, so a replayed step charges under the same order and the processor sees one attempt.
 */
export async function openRebill(em: EntityManager, rebill: { subscriptionId: number; period: number; attempt: number }): Promise<number> {
  await em.execute(
    `insert into rebills (subscription_id, period, attempt, order_id, created_at) values (?, ?, ?, nextval('orders_id_seq'), now())
     on conflict (subscription_id, period, attempt) do nothing`,
    [rebill.subscriptionId, rebill.period, rebill.attempt],
  );
  const [row] = await em.execute<{ order_id: number }[]>(`select order_id from rebills where subscription_id = ? and period = ? and attempt = ?`, [
    rebill.subscriptionId,
    rebill.period,
    rebill.attempt,
  ]);
  return row!.order_id;
}

/** The order a period's try ran under (undefined: never opened), with its amount and currency once its payment opened it. */
export async function findRebillOrder(
  em: EntityManager,
  rebill: { subscriptionId: number; period: number; attempt: number },
): Promise<{ orderId: number; amount: string | null; currency: string | null } | undefined> {
  const [row] = await em.execute<{ order_id: number; amount: string | null; currency: string | null }[]>(
    `select r.order_id, o.amount, o.currency from rebills r left join orders o on o.id = r.order_id where r.subscription_id = ? and r.period = ? and r.attempt = ?`,
    [rebill.subscriptionId, rebill.period, rebill.attempt],
  );
  return row && { orderId: row.order_id, amount: row.amount, currency: row.currency };
}

/**
 * Whether a failed rebill's order may have charged the card all the same: an authorization whose outcome was never
 * learnt (its answer lost, and the processor could not be asked about it until the payment gave up: recorded as a
 * timeout, never completed), or an approval the failed payment could not void (no successful void refers to it).
 */
export async function rebillMayHaveCharged(em: EntityManager, orderId: number): Promise<boolean> {
  const [row] = await em.execute<{ charged: boolean }[]>(
    `select exists (
       select 1 from transactions t
        where t.order_id = ? and t.kind = 'authorization'
          and ((t.status_id = 4285 and t.completed_at is null)
               or (t.success and not exists (select 1 from transactions v where v.original_transaction_id = t.id and v.kind = 'void' and v.success)))
     ) as charged`,
    [orderId],
  );
  return row!.charged;
}

/**
 * A rebill's outcome: paid moves the subscription to the next period (`billed_periods` only grows, so a replay
 * changes nothing); declined puts it in grace until `graceUntil`. A cancelled subscription is left as it is, and so
 * is one a later try was opened for: a late record of an earlier try (a step that outlived its time limit while billing
 * went on) changes its own row only, never the state, billed periods or next charge the later one recorded.
 */
export async function recordRebillOutcome(
  em: EntityManager,
  outcome: { subscriptionId: number; period: number; attempt: number; paid: boolean; statusId: number; nextBillingAt: Date; graceUntil: Date | null },
): Promise<void> {
  await em.execute(`update rebills set state = ?, status_id = ? where subscription_id = ? and period = ? and attempt = ?`, [
    outcome.paid ? 'paid' : 'declined',
    outcome.statusId,
    outcome.subscriptionId,
    outcome.period,
    outcome.attempt,
  ]);
  const latestTry = `not exists (select 1 from rebills later where later.subscription_id = subscriptions.id and (later.period, later.attempt) > (?, ?))`;
  if (outcome.paid) {
    await em.execute(
      `update subscriptions set state = 'active', billed_periods = greatest(billed_periods, ?), next_billing_at = ?, grace_until = null
        where id = ? and state in ('active', 'grace') and ${latestTry}`,
      [outcome.period, outcome.nextBillingAt, outcome.subscriptionId, outcome.period, outcome.attempt],
    );
  } else {
    await em.execute(`update subscriptions set state = 'grace', next_billing_at = ?, grace_until = ? where id = ? and state in ('active', 'grace') and ${latestTry}`, [
      outcome.nextBillingAt,
      outcome.graceUntil,
      outcome.subscriptionId,
      outcome.period,
      outcome.attempt,
    ]);
  }
}

/**
 * A try whose charge was uncertain, found to have charged nothing once the processor was asked: its row is closed as
 * not paid (`declined`), with the status its order was last recorded with (its void's, else its last attempt's: a
 * decline, or 4285 for one the processor never saw). Its row only: the subscription's state and next charge are the new try's to record,
 * which follows at once. A row already closed keeps what it says.
 */
export async function closeUnchargedRebill(em: EntityManager, rebill: { subscriptionId: number; period: number; attempt: number }): Promise<void> {
  await em.execute(
    `update rebills r
        set state = 'declined',
            status_id = coalesce(
              (select v.status_id from transactions v where v.order_id = r.order_id and v.kind = 'void' and v.success limit 1),
              (select t.status_id from transactions t where t.order_id = r.order_id and t.kind = 'authorization' order by t.attempt_number desc limit 1))
      where r.subscription_id = ? and r.period = ? and r.attempt = ? and r.state = 'processing'`,
    [rebill.subscriptionId, rebill.period, rebill.attempt],
  );
}

/** Ends the subscription (the e-mail may subscribe again); the first reason is kept. True when this call ended it. */
export async function cancelSubscription(em: EntityManager, cancellation: { subscriptionId: number; reason: string }): Promise<boolean> {
  const ended = await em.execute<{ id: number }[]>(
    // An ended subscription is never charged again, so the card kept for its rebills goes with it (PCI DSS: no card
    // data past its purpose); a rebill already in flight carries its own sealed copy in its payment's input.
    // No grace either: nothing is retried after a cancel.
    `update subscriptions set state = 'cancelled', cancelled_at = now(), cancel_reason = ?, paused_at = null, pause_reason = null, grace_until = null, sealed_card = null
      where id = ? and state <> 'cancelled' returning id`,
    [cancellation.reason, cancellation.subscriptionId],
  );
  // A rebill prepared but never charged (cancelled before its payment opened the order) did not happen.
  await em.execute(`delete from rebills r where r.subscription_id = ? and r.state = 'processing' and not exists (select 1 from orders o where o.id = r.order_id)`, [
    cancellation.subscriptionId,
  ]);
  return ended.length > 0;
}

export async function setSubscriptionPaused(em: EntityManager, change: { subscriptionId: number; paused: boolean; reason?: PauseReason }): Promise<void> {
  if (change.paused) {
    await em.execute(`update subscriptions set paused_at = coalesce(paused_at, now()), pause_reason = coalesce(pause_reason, ?) where id = ? and state <> 'cancelled'`, [
      change.reason ?? null,
      change.subscriptionId,
    ]);
  } else {
    await em.execute(`update subscriptions set paused_at = null, pause_reason = null where id = ?`, [change.subscriptionId]);
  }
}

/** The rebills of a subscription (tests and support look-ups), in order. */
export async function listRebills(em: EntityManager, subscriptionId: number): Promise<{ period: number; attempt: number; orderId: number; state: string; statusId: number | null }[]> {
  const rows = await em.execute<{ period: number; attempt: number; order_id: number; state: string; status_id: number | null }[]>(
    `select period, attempt, order_id, state, status_id from rebills where subscription_id = ? order by period, attempt`,
    [subscriptionId],
  );
  return rows.map((row) => ({ period: row.period, attempt: row.attempt, orderId: row.order_id, state: row.state, statusId: row.status_id }));
}

/**
 * The billing period a subscription's next charge pays, as its billing workflow counts it: a period with rebills
 * but none paid (its retries under way), else the one after the last billed, else 0 for a salvaged checkout (its
 * declined charge is tried again first) and 1 after a paid one.
 */
export async function nextBillingPeriodOf(em: EntityManager, subscriptionId: number): Promise<number> {
  const [row] = await em.execute<{ period: number }[]>(
    `select coalesce(
       (select max(r.period) from rebills r where r.subscription_id = s.id
           and not exists (select 1 from rebills paid where paid.subscription_id = r.subscription_id and paid.period = r.period and paid.state = 'paid')),
       (select max(r.period) + 1 from rebills r where r.subscription_id = s.id),
       case when o.state = 'declined' then 0 else 1 end) as period
       from subscriptions s join orders o on o.id = s.order_id
      where s.id = ?`,
    [subscriptionId],
  );
  return row?.period ?? 1;
}
