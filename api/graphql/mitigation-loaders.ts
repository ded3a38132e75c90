import DataLoader from 'dataloader';
import { findCustomersByIds, findOrdersByIds, findSubscriptionsByOrderIds, type RelatedCustomer, type RelatedOrder, type RelatedSubscription } from '../../data/queries/mitigation.ts';
import { findVisibleMerchantAccounts } from '../../data/queries/merchant-account-admin.ts';
import type { MerchantAccountView } from '../../domain/merchant-accounts/merchant-account.ts';
import { toView } from '../../services/merchant-accounts/merchant-account-views.ts';
import type { GraphQLContext } from './context.ts';

/**
 * The records a page of mitigation transactions refers to, each kind read with one statement for the whole page
 * (whatever the page size or the aliases). Built per request and tenant, so nothing is cached across callers.
 */
export interface MitigationLoaders {
  readonly order: DataLoader<number, RelatedOrder | null>;
  readonly customer: DataLoader<number, RelatedCustomer | null>;
  readonly merchantAccount: DataLoader<number, MerchantAccountView | null>;
  /** By the transaction's order id. */
  readonly subscription: DataLoader<number, RelatedSubscription | null>;
}

const byRequest = new WeakMap<GraphQLContext, Map<number, MitigationLoaders>>();

function keyed<T>(rows: readonly T[], key: (row: T) => number): Map<number, T> {
  return new Map(rows.map((row) => [key(row), row]));
}

export function mitigationLoaders(context: GraphQLContext, tenantId: number): MitigationLoaders {
  let perTenant = byRequest.get(context);
  if (!perTenant) byRequest.set(context, (perTenant = new Map()));
  let loaders = perTenant.get(tenantId);
  if (!loaders) {
    const { em } = context;
    loaders = {
      order: new DataLoader(async (ids) => {
        const found = keyed(await findOrdersByIds(em, ids), (o) => o.id);
        return ids.map((id) => found.get(id) ?? null);
      }),
      customer: new DataLoader(async (ids) => {
        const found = keyed(await findCustomersByIds(em, ids), (c) => c.id);
        return ids.map((id) => found.get(id) ?? null);
      }),
      merchantAccount: new DataLoader(async (ids) => {
        const found = keyed(await findVisibleMerchantAccounts(em, tenantId, ids), (m) => m.view.id);
        return ids.map((id) => {
          const stored = found.get(id);
          return stored ? toView(stored, context.services.secretBox) : null;
        });
      }),
      subscription: new DataLoader(async (orderIds) => {
        const found = keyed(await findSubscriptionsByOrderIds(em, orderIds), (s) => s.transactionOrderId);
        return orderIds.map((id) => found.get(id) ?? null);
      }),
    };
    perTenant.set(tenantId, loaders);
  }
  return loaders;
}
