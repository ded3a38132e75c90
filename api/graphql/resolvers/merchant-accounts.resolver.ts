import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { listMerchantAccountAudit } from '../../../data/queries/merchant-account-admin.ts';
import { listMerchantAccounts } from '../../../services/merchant-accounts/merchant-account-views.ts';
import { parseMerchantAccountUpdate, updateMerchantAccount } from '../../../services/merchant-accounts/update-merchant-account.ts';
import {
  MerchantAccountAuditArgs,
  MerchantAccountAuditEntryType,
  MerchantAccountsArgs,
  MerchantAccountType,
  UpdateMerchantAccountArgs,
} from '../../../schema/graphql/merchant-account.type.ts';
import { requireTenant, type GraphQLContext } from '../context.ts';
import { boundedListCost, pageCost } from '../cost.ts';

/** For the cost estimate: a tenant's MIDs are tens, rarely more. */
const ACCOUNTS_PER_TENANT = 50;

/** Merchant-account administration over GraphQL: the services of GET/PUT /api/admin/merchantaccounts. */
@Resolver()
export class MerchantAccountsResolver {
  @Query(() => [MerchantAccountType], {
    description: "The tenant's and its child companies' merchant accounts (credentials masked); filters combine with AND",
    complexity: boundedListCost(ACCOUNTS_PER_TENANT, 1),
  })
  async merchantAccounts(@Args(() => MerchantAccountsArgs) args: MerchantAccountsArgs, @Ctx() context: GraphQLContext): Promise<MerchantAccountType[]> {
    const tenantId = requireTenant(context, args.tenantId);
    const filter = { live: args.live ?? undefined, brandId: args.brandId ?? undefined, gateway: args.gateway ?? undefined, currency: args.currency?.toUpperCase() };
    return (await listMerchantAccounts(context.em, context.services.secretBox, tenantId, filter)) as unknown as MerchantAccountType[];
  }

  @Mutation(() => MerchantAccountType, {
    description: 'Updates a merchant account at the rowVersion read (the rules of PUT /api/admin/merchantaccounts/{id}): CONFLICT when stale, audited with userEmail',
  })
  async updateMerchantAccount(@Args(() => UpdateMerchantAccountArgs) args: UpdateMerchantAccountArgs, @Ctx() context: GraphQLContext): Promise<MerchantAccountType> {
    const tenantId = requireTenant(context, args.tenantId);
    const update = parseMerchantAccountUpdate(args.input);
    const actor = context.caller.kind === 'operator' ? `operator:graphql (${args.userEmail})` : args.userEmail;
    return (await updateMerchantAccount(context.em, context.services.secretBox, { tenantId, id: args.id, actor, update })) as unknown as MerchantAccountType;
  }

  @Query(() => [MerchantAccountAuditEntryType], {
    description: "Changes to the tenant's merchant accounts, newest first: who (UserEmail), when, each field before and after",
    complexity: pageCost('first', 50),
  })
  async merchantAccountAudit(@Args(() => MerchantAccountAuditArgs) args: MerchantAccountAuditArgs, @Ctx() context: GraphQLContext): Promise<MerchantAccountAuditEntryType[]> {
    const tenantId = requireTenant(context, args.tenantId);
    return listMerchantAccountAudit(context.em, { tenantId, merchantAccountId: args.merchantAccountId ?? undefined, limit: args.first ?? 50, before: args.before ?? undefined });
  }
}
