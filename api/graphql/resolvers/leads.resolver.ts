import { Args, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import { JSONObjectResolver, JSONResolver } from 'graphql-scalars';
import { listLeads } from '../../../data/queries/leads.ts';
import { LeadValidationError } from '../../../domain/leads/lead-errors.ts';
import type { LeadEnvironment } from '../../../domain/leads/lead-keys.ts';
import { trackingFieldsOf } from '../../../domain/leads/lead-json.ts';
import { checkFilter, decodeLeadCursor, encodeLeadCursor, LEAD_PAGE_SIZE, type LeadFilter } from '../../../domain/leads/lead-query.ts';
import { generateLeadKeys, replaceAllowedOrigins } from '../../../services/leads/lead-keys.ts';
import {
  CustomerLeadConnectionType,
  CustomerLeadType,
  CustomerLeadsArgs,
  GeneratedLeadKeysType,
  GenerateLeadKeysArgs,
  LeadApplicationType,
  SetLeadAllowedOriginsArgs,
} from '../../../schema/graphql/lead.type.ts';
import { actorOf, requireOperator, requireTenant, type GraphQLContext } from '../context.ts';
import { pageCost } from '../cost.ts';

/** The REST query's filter names, as the arguments of `customerLeads` spell them. */
const ARGUMENT_OF_FILTER = { id: 'id', email: 'email', session_id: 'sessionId', transaction_id: 'transactionId', subscription_id: 'subscriptionId', status: 'status' } as const;

/** The filters given, checked like the REST query's (spec 4.4); every bad one is named. */
function filterOf(args: CustomerLeadsArgs): LeadFilter {
  const given = {
    id: args.id,
    email: args.email,
    session_id: args.sessionId,
    transaction_id: args.transactionId,
    subscription_id: args.subscriptionId === undefined || args.subscriptionId === null ? undefined : String(args.subscriptionId),
    status: args.status,
  };
  const problems = Object.entries(given).flatMap(([name, value]) => {
    if (value === undefined || value === null) return [];
    const problem = checkFilter(name as keyof typeof given, value);
    // Named as this API names its arguments (`sessionId`), not as the REST query does.
    return problem ? [`${ARGUMENT_OF_FILTER[name as keyof typeof given]}: ${problem}`] : [];
  });
  if (problems.length > 0) throw new LeadValidationError(problems);
  return {
    id: args.id ?? undefined,
    email: args.email ?? undefined,
    sessionId: args.sessionId ?? undefined,
    transactionId: args.transactionId ?? undefined,
    subscriptionId: args.subscriptionId ?? undefined,
    status: (args.status ?? undefined) as LeadFilter['status'],
  };
}

@Resolver()
export class LeadsResolver {
  @Query(() => CustomerLeadConnectionType, {
    description: "The tenant's customer leads, most recently updated first; filters combine with AND (those of GET /api/public/customer-leads)",
    complexity: pageCost('first', LEAD_PAGE_SIZE.default),
  })
  async customerLeads(@Args(() => CustomerLeadsArgs) args: CustomerLeadsArgs, @Ctx() context: GraphQLContext): Promise<CustomerLeadConnectionType> {
    const tenantId = requireTenant(context, args.tenantId);
    const first = args.first ?? LEAD_PAGE_SIZE.default;
    const after = args.after ? decodeLeadCursor(args.after) : undefined;
    // One more than asked says whether another page follows.
    const leads = await listLeads(context.em, { tenantId, filter: filterOf(args), limit: first + 1, after });
    const page = leads.slice(0, first);
    const edges = page.map((lead) => ({ cursor: encodeLeadCursor(lead.cursor), node: { ...lead, trackingFields: trackingFieldsOf(lead) } }));
    return { edges, pageInfo: { hasNextPage: leads.length > first, endCursor: edges.at(-1)?.cursor ?? null } };
  }

  @Mutation(() => GeneratedLeadKeysType, {
    description: 'Operator only: a new lead key pair for an application and environment. The previous pair stops working at once; the keys are shown only here.',
  })
  async generateLeadKeys(@Args(() => GenerateLeadKeysArgs) args: GenerateLeadKeysArgs, @Ctx() context: GraphQLContext): Promise<GeneratedLeadKeysType> {
    requireOperator(context);
    return generateLeadKeys(context.em, { tenantId: args.tenantId, applicationSlug: args.application, environment: args.environment as LeadEnvironment, actor: actorOf(context) });
  }

  @Mutation(() => LeadApplicationType, { description: "Operator only: replaces the origins whose pages may write an application's leads with its publishable key" })
  async setLeadAllowedOrigins(@Args(() => SetLeadAllowedOriginsArgs) args: SetLeadAllowedOriginsArgs, @Ctx() context: GraphQLContext): Promise<LeadApplicationType> {
    requireOperator(context);
    return replaceAllowedOrigins(context.em, { tenantId: args.tenantId, applicationSlug: args.application, origins: args.origins, actor: actorOf(context) });
  }
}

/**
 * A lead's free-form data, each value counted towards the answer's budget (answer-budget.ts) as it is resolved. Each
 * also costs as much as sixty fields: the page is read from the database before any value is counted, so the cost
 * limit bounds how many pages of such data one request reads (a page of 100 with all three, or three with scans).
 */
const LEAD_DATA_COST = 60;

@Resolver(() => CustomerLeadType)
export class CustomerLeadDataResolver {
  @FieldResolver(() => JSONResolver, { description: 'Visited pages: objects with `page`', complexity: LEAD_DATA_COST })
  scans(@Root() lead: CustomerLeadType, @Ctx() context: GraphQLContext): unknown[] {
    return context.answerBudget.take(lead.scans);
  }

  @FieldResolver(() => JSONObjectResolver, { nullable: true, description: 'Decoded `pending_data_b64`', complexity: LEAD_DATA_COST })
  pendingData(@Root() lead: CustomerLeadType, @Ctx() context: GraphQLContext): Record<string, unknown> | null {
    return context.answerBudget.take(lead.pendingData);
  }

  @FieldResolver(() => JSONObjectResolver, { description: 'Every `cfa_*` and `d2d_*` field by name; `cfa_device` always (null until written)', complexity: LEAD_DATA_COST })
  trackingFields(@Root() lead: CustomerLeadType, @Ctx() context: GraphQLContext): Record<string, string | null> {
    return context.answerBudget.take(lead.trackingFields);
  }
}
