import { defineEntity, p } from '@mikro-orm/core';
import { CARD_NETWORKS, type SubscriptionPlan } from '../../domain/catalog/product.ts';
import { Application } from './application.entity.ts';
import { Tenant } from './tenant.entity.ts';

/** A product a checkout sells: `POST /api/{productId}` charges its price. */
const ProductSchema = defineEntity({
  name: 'Product',
  tableName: 'products',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    /** The storefront selling it: a paid lead must belong to the same application (DESIGN 4, paid matching). */
    application: () => p.manyToOne(Application),
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
  // Gateways cache products and drop them on this notification (migration 000014, services/catalog/product-cache.ts).
  triggers: [
    {
      name: 'products_notify_catalog_change',
      timing: 'after',
      events: ['insert', 'update', 'delete'],
      expression: `create trigger "products_notify_catalog_change" after insert or update or delete on "products" for each row execute function "notify_catalog_change"()`,
    },
  ],
});
export class Product extends ProductSchema.class {}
ProductSchema.setClass(Product);
