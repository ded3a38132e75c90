import { Args, Ctx, Query, Resolver } from 'type-graphql';
import { listStatuses } from '../../../data/queries/status-codes.ts';
import { parseStatusListQuery, STATUS_PAGE_SIZE } from '../../../domain/statuses/status-query.ts';
import { StatusesArgs, StatusPageType } from '../../../schema/graphql/status.type.ts';
import { requireCaller, type GraphQLContext } from '../context.ts';
import { pageCost } from '../cost.ts';

@Resolver()
export class StatusesResolver {
  @Query(() => StatusPageType, {
    description: 'Transaction status codes; the same answers as GET /api/admin/statuses',
    // The page's own fields are costed per item too: a slight overestimate, simpler than reaching into `data`.
    complexity: pageCost('pageSize', STATUS_PAGE_SIZE.default),
  })
  async statuses(@Args(() => StatusesArgs) args: StatusesArgs, @Ctx() context: GraphQLContext): Promise<StatusPageType> {
    requireCaller(context);
    return listStatuses(context.em, parseStatusListQuery({ ...args }));
  }
}
