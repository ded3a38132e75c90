import { Args, Ctx, Query, Resolver } from 'type-graphql';
import { listStatuses } from '../../../data/queries/status-codes.ts';
import { parseStatusListQuery } from '../../../domain/statuses/status-query.ts';
import { StatusesArgs, StatusPageType } from '../../../schema/graphql/status.type.ts';
import { requireCaller, type GraphQLContext } from '../context.ts';

@Resolver()
export class StatusesResolver {
  @Query(() => StatusPageType, { description: 'Transaction status codes; the same answers as GET /api/admin/statuses' })
  async statuses(@Args(() => StatusesArgs) args: StatusesArgs, @Ctx() context: GraphQLContext): Promise<StatusPageType> {
    requireCaller(context);
    return listStatuses(context.em, parseStatusListQuery({ ...args }));
  }
}
