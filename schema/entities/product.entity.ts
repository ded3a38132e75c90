import { defineEntity, p } from '@mikro-orm/core';
import { Tenant } from './tenant.entity.ts';

/** Card networks the gateway recognises from the BIN. */
export const CARD_NETWORKS = ['NetworkA', 'NetworkB', 'NetworkC', 'NetworkD', 'NetworkE'] as const;
export type CardNetwork = (typeof CARD_NETWORKS)[number];

export interface SubscriptionPlan {
  /** Price of each recurring charge, decimal string in the product currency. */
  readonly recurringAmount: string;
  readonly intervalDays: number;
  readonly trialDays: number;
  /** Days a subscription stays active after an insufficient-funds decline (decline salvage); 0 disables. */
  readonly gracePeriodDays: number;
}

/** A product a checkout sells: `POST /api/{productId}` charges its price. */
const ProductSchema = defineEntity({
  name: 'Product',
  tableName: 'products',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    slug: p.string().length(64),
    name: p.string().length(200),
    /** Exact decimal; never a float. */
    price: p.decimal('string').precision(14).scale(2),
    currency: p.string().length(3),
    acceptedNetworks: p.array().default([...CARD_NETWORKS]),
    subscriptionPlan: p.json<SubscriptionPlan>().nullable(),
    /** Velocity: the same card at most this many times per window. */
    cardSubmitLimit: p.integer().default(3),
    cardSubmitWindowSeconds: p.integer().default(600),
    /** Velocity: the same e-mail at most this many submits for the product. */
    emailSubmitLimit: p.integer().default(5),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['tenant', 'slug'] }],
});
export class Product extends ProductSchema.class {}
ProductSchema.setClass(Product);
