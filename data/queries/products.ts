import type { EntityManager } from '@mikro-orm/postgresql';
import type { SubscriptionPlan } from '../../domain/catalog/product.ts';

interface ProductRow {
  id: number;
  tenant_id: number;
  price: string;
  currency: string;
  accepted_networks: string[];
  subscription_plan: SubscriptionPlan | null;
}

/**
 * What a submit needs to know about the product it pays for, before screening. The gateway caches it
 * (services/catalog/product-cache.ts): velocity limits are not part of it, screening reads them as committed.
 */
export interface PayableProduct {
  readonly id: number;
  readonly tenantId: number;
  /** Decimal string in `currency`. */
  readonly price: string;
  readonly currency: string;
  readonly acceptedNetworks: readonly string[];
  readonly subscriptionPlan: SubscriptionPlan | null;
}

/** The tenant's product by id; another tenant's product is not found, exactly like a missing one. */
export async function findTenantProduct(em: EntityManager, tenantId: number, productId: number): Promise<PayableProduct | undefined> {
  const [row] = await em.execute<ProductRow[]>(
    `select id, tenant_id, price, currency, accepted_networks, subscription_plan from products where id = ? and tenant_id = ?`,
    [productId, tenantId],
  );
  return (
    row && {
      id: row.id,
      tenantId: row.tenant_id,
      price: row.price,
      currency: row.currency,
      acceptedNetworks: row.accepted_networks,
      subscriptionPlan: row.subscription_plan,
    }
  );
}
