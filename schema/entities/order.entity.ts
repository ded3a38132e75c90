import { defineEntity, p } from '@mikro-orm/core';
import { Affiliate, Campaign, Customer } from './customer.entity.ts';
import { MerchantAccount } from './merchant-account.entity.ts';
import { Product } from './product.entity.ts';
import { Tenant } from './tenant.entity.ts';
import { UNPROCESSED_REASONS } from '../../domain/payments/unprocessed-reason.ts';

export const ORDER_KINDS = ['submit', 'subscription'] as const;

/** The card of an order as an answer may show it. */
export interface ShownCard {
  readonly brand: string;
  readonly bin: string;
  readonly last4: string;
  readonly expiryMonth: number;
  readonly expiryYear: number;
}
/** `authorized`: approved, not captured yet (`capture: false`); `voided`: released before capture. */
export const ORDER_STATES = ['processing', 'pending_3ds', 'authorized', 'approved', 'declined', 'failed', 'expired', 'voided'] as const;
export type OrderState = (typeof ORDER_STATES)[number];
/** `automatic`: charged with its authorization; `manual`: authorized only (`capture: false`), captured or voided later. */
export const CAPTURE_METHODS = ['automatic', 'manual'] as const;
export type CaptureMethod = (typeof CAPTURE_METHODS)[number];
export { UNPROCESSED_REASONS, type UnprocessedReason } from '../../domain/payments/unprocessed-reason.ts';

/**
 * One card submit (`kind: submit`, its id is `submitOrderId`), or the order of a subscription the
 * submit created (`kind: subscription`, its id is `orderId`, spec 2.3).
 */
const OrderSchema = defineEntity({
  name: 'Order',
  tableName: 'orders',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    product: () => p.manyToOne(Product),
    customer: () => p.manyToOne(Customer),
    kind: p.enum(() => [...ORDER_KINDS]).default('submit'),
    parentOrder: () => p.manyToOne(Order).nullable(),
    state: p.enum(() => [...ORDER_STATES]).default('processing'),
    amount: p.decimal('string').precision(14).scale(2),
    currency: p.string().length(3),
    /** Persisted only when 50 characters or fewer (spec 2.1, 8): used for webhook and lead correlation. */
    partnerSession: p.string().length(50).nullable(),
    serviceSession: p.string().length(200).nullable(),
    workflowId: p.string().length(200).nullable(),
    threeDSecureId: p.string().length(64).nullable().unique().fieldName('three_d_secure_id'),
    /** Where the cardholder completes the 3-D Secure challenge (the processor's page). */
    challengeUrl: p.string().length(2048).nullable(),
    campaign: () => p.manyToOne(Campaign).nullable(),
    affiliate: () => p.manyToOne(Affiliate).nullable(),
    subAffiliatePrimary: p.string().length(200).nullable(),
    subAffiliateSecondary: p.string().length(200).nullable(),
    trackerClickId: p.string().length(200).nullable(),
    props: p.json<Record<string, unknown>>().nullable(),
    userAgent: p.string().length(1000).nullable(),
    ip: p.string().length(64).nullable(),
    billingAddress: p.json<Record<string, string>>().nullable(),
    shippingAddress: p.json<Record<string, string>>().nullable(),
    storefront: p.json<Record<string, boolean>>().nullable(),
    phone: p.string().length(40).nullable(),
    mobileWalletA: p.boolean().default(false),
    /** The card as shown (brand, the BIN shown, last four, expiry), from the order's opening; never its number. */
    card: p.json<ShownCard>().nullable(),
    /** How the payment takes its money, from the order's opening; none for an order opened before it was kept. */
    captureMethod: p.enum(() => [...CAPTURE_METHODS]).nullable(),
    /** Why it failed before any processor was asked; none for a payment that was sent (or closed before this was kept). */
    unprocessedReason: p.enum(() => [...UNPROCESSED_REASONS]).nullable(),
    /**
     * The MID whose monthly volume holds this order's amount while its current attempt is in flight (attempts
     * run one after another, so an order holds at most one reservation), and the month it is counted in.
     */
    capReservation: () => p.manyToOne(MerchantAccount).nullable().deleteRule('set null'),
    capReservationMonth: p.date().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  indexes: [
    { properties: ['tenant', 'partnerSession'] },
    { properties: ['tenant', 'createdAt'] },
    { properties: ['parentOrder'] },
    // Mitigation search by campaign (migration 000012).
    { name: 'orders_campaign_id_index', properties: ['campaign'] },
    // GET /payments: a tenant's payments newest first, and an e-mail's through its customer (migration 000013).
    { name: 'orders_tenant_payments_index', expression: `create index "orders_tenant_payments_index" on "orders" ("tenant_id", "id" desc) where "kind" = 'submit'` },
    { name: 'orders_customer_id_index', expression: `create index "orders_customer_id_index" on "orders" ("customer_id", "id" desc)` },
    {
      // A submit order has at most one subscription order, however often its settlement runs.
      name: 'orders_one_subscription_order_per_submit',
      expression: `create unique index "orders_one_subscription_order_per_submit" on "orders" ("parent_order_id") where "kind" = 'subscription'`,
    },
  ],
});
export class Order extends OrderSchema.class {}
OrderSchema.setClass(Order);

export const SUBSCRIPTION_STATES = ['pending', 'active', 'grace', 'cancelled'] as const;

/**
 * A subscription created by a submit on a product with a plan. It is claimed `pending` when the order opens
 * (before any processor call) and becomes `active` or `grace`, or is removed when the charge fails.
 */
const SubscriptionSchema = defineEntity({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    product: () => p.manyToOne(Product),
    customer: () => p.manyToOne(Customer),
    order: () => p.manyToOne(Order).unique(),
    email: p.string().length(320),
    state: p.enum(() => [...SUBSCRIPTION_STATES]),
    recurringAmount: p.decimal('string').precision(14).scale(2),
    nextBillingAt: p.datetime(),
    graceUntil: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    /** The card for rebills, sealed (AES-256-GCM) without its CVV: rebills run as merchant-initiated transactions. */
    sealedCard: p.text().nullable(),
    /** Billing periods paid after the first charge. */
    billedPeriods: p.integer().default(0),
    pausedAt: p.datetime().nullable(),
    /** Why the gateway paused billing (`charge_uncertain`); null for a pause the merchant asked for. */
    pauseReason: p.string().length(40).nullable(),
    cancelledAt: p.datetime().nullable(),
    cancelReason: p.string().length(100).nullable(),
  },
  indexes: [
    { properties: ['tenant', 'product', 'email'] },
    {
      // One live (pending, active or grace) subscription per tenant, product and e-mail, whatever its case.
      name: 'subscriptions_one_live_per_email',
      expression: `create unique index "subscriptions_one_live_per_email" on "subscriptions" ("tenant_id", "product_id", lower("email")) where "state" in ('pending', 'active', 'grace')`,
    },
  ],
});
export class Subscription extends SubscriptionSchema.class {}
SubscriptionSchema.setClass(Subscription);

export const REBILL_STATES = ['processing', 'paid', 'declined'] as const;

/** One charge of a subscription's billing period (its first try, or a dunning retry), with the order it runs under. */
const RebillSchema = defineEntity({
  name: 'Rebill',
  tableName: 'rebills',
  properties: {
    subscription: () => p.manyToOne(Subscription).primary().deleteRule('cascade'),
    period: p.integer().primary(),
    attempt: p.integer().primary(),
    orderId: p.integer().unique(),
    state: p.enum(() => [...REBILL_STATES]).default('processing'),
    statusId: p.integer().nullable(),
    createdAt: p.datetime(),
  },
});
export class Rebill extends RebillSchema.class {}
RebillSchema.setClass(Rebill);
