import { Args, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { decodeMitigationCursor, encodeMitigationCursor, parseMitigationFilter } from '../../../domain/mitigation/search.ts';
import { searchTransactions } from '../../../services/mitigation/search-transactions.ts';
import { MerchantAccountType } from '../../../schema/graphql/merchant-account.type.ts';
import {
  MITIGATION_GRAPHQL_PAGE,
  MitigationCustomerType,
  MitigationOrderType,
  MitigationSubscriptionType,
  MitigationTransactionConnectionType,
  MitigationTransactionsArgs,
  MitigationTransactionType,
} from '../../../schema/graphql/mitigation.type.ts';
import { requireTenant, type GraphQLContext } from '../context.ts';
import { pageCost } from '../cost.ts';
import { mitigationLoaders } from '../mitigation-loaders.ts';

/**
 * Which tenant's loaders a transaction's related records come from (the search's: an operator names it in the
 * arguments). Keyed by the node itself, so the node must reach the field resolvers as this very object: type-graphql
 * hands `@Root()` a copy unless it already is an instance of the type.
 */
const searchedTenant = new WeakMap<MitigationTransactionType, number>();

/** The mitigation search of POST /api/mitigation/transactions with cursor pages and related records. */
@Resolver(() => MitigationTransactionType)
export class MitigationResolver {
  @Query(() => MitigationTransactionConnectionType, {
    description: "Searches the tenant's transactions (spec 4.10 filters, AND; an array matches any value), newest first",
    complexity: pageCost('first', MITIGATION_GRAPHQL_PAGE.default),
  })
  async mitigationTransactions(@Args(() => MitigationTransactionsArgs) args: MitigationTransactionsArgs, @Ctx() context: GraphQLContext): Promise<MitigationTransactionConnectionType> {
    const tenantId = requireTenant(context, args.tenantId);
    const { tenantId: _tenant, first, after, ...filters } = args;
    const filter = parseMitigationFilter(Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== null && value !== undefined)));
    const limit = first ?? MITIGATION_GRAPHQL_PAGE.default;
    const result = await searchTransactions(context.em, { tenantId, filter, page: { after: after ? decodeMitigationCursor(after) : undefined, limit } });
    const edges = result.records.map(({ cursor, ...record }) => {
      const node = Object.assign(new MitigationTransactionType(), record);
      searchedTenant.set(node, tenantId);
      return { cursor: encodeMitigationCursor(cursor), node };
    });
    return { edges, pageInfo: { hasNextPage: result.moreResults, endCursor: edges.at(-1)?.cursor ?? null } };
  }

  @FieldResolver(() => MitigationOrderType, { nullable: true })
  order(@Root() transaction: MitigationTransactionType, @Ctx() context: GraphQLContext) {
    return this.loaders(transaction, context).order.load(transaction.orderId);
  }

  @FieldResolver(() => MitigationCustomerType, { nullable: true })
  customer(@Root() transaction: MitigationTransactionType, @Ctx() context: GraphQLContext) {
    return this.loaders(transaction, context).customer.load(transaction.customerId);
  }

  @FieldResolver(() => MerchantAccountType, { nullable: true, description: 'Null when the transaction used no merchant account' })
  async merchantAccount(@Root() transaction: MitigationTransactionType, @Ctx() context: GraphQLContext) {
    if (transaction.merchantAccountId === null) return null;
    return this.loaders(transaction, context).merchantAccount.load(transaction.merchantAccountId);
  }

  @FieldResolver(() => MitigationSubscriptionType, { nullable: true, description: 'The subscription of the order, if any' })
  subscription(@Root() transaction: MitigationTransactionType, @Ctx() context: GraphQLContext) {
    return this.loaders(transaction, context).subscription.load(transaction.orderId);
  }

  private loaders(transaction: MitigationTransactionType, context: GraphQLContext) {
    return mitigationLoaders(context, searchedTenant.get(transaction) ?? requireTenant(context));
  }
}
