import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { SubscriptionView } from '../../../data/queries/rebills.ts';
import { DomainError } from '../../../domain/errors.ts';
import { PaymentApiError } from '../../../domain/payments-api/errors.ts';
import type { SubscriptionAction } from '../../../domain/subscriptions/subscription-controller.ts';
import { SubscriptionArgs, SubscriptionType } from '../../../schema/graphql/subscription.type.ts';
import { controlSubscription, findSubscriptionOf } from '../../../services/subscriptions/control-subscription.ts';
import { requireTenant, type GraphQLContext } from '../context.ts';

const toType = (s: SubscriptionView, pendingAction: string | null = null): SubscriptionType => ({
  id: s.id,
  productId: s.productId,
  email: s.email,
  state: s.state,
  paused: s.pausedAt !== null,
  pauseReason: s.pausedAt !== null ? s.pauseReason : null,
  recurringAmount: s.recurringAmount,
  currency: s.currency,
  billedPeriods: s.billedPeriods,
  nextBillingAt: s.nextBillingAt,
  graceUntil: s.graceUntil,
  cancelledAt: s.cancelledAt,
  cancelReason: s.cancelReason,
  createdAt: s.createdAt,
  pendingAction,
});

/** The service's refusals in GraphQL's terms: a missing subscription is NOT_FOUND, any other refusal BAD_USER_INPUT. */
async function asDomainErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof PaymentApiError)) throw error;
    throw new DomainError(error.code === 'resource_missing' ? 'not_found' : 'validation', error.message, { field: error.extra.param });
  }
}

@Resolver()
export class SubscriptionsResolver {
  @Query(() => SubscriptionType, { description: "One of the tenant's subscriptions" })
  async subscription(@Args(() => SubscriptionArgs) args: SubscriptionArgs, @Ctx() context: GraphQLContext): Promise<SubscriptionType> {
    const tenantId = requireTenant(context, args.tenantId);
    return toType(await asDomainErrors(() => findSubscriptionOf(context.em, tenantId, args.id)));
  }

  @Mutation(() => SubscriptionType, { description: 'Cancels a subscription: no further rebills (one already running completes). Signals its billing workflow; answered once it shows, or with `pendingAction`.' })
  cancelSubscription(@Args(() => SubscriptionArgs) args: SubscriptionArgs, @Ctx() context: GraphQLContext): Promise<SubscriptionType> {
    return this.control(args, context, 'cancel');
  }

  @Mutation(() => SubscriptionType, { description: 'Pauses recurring billing until resumed. Answered once its billing workflow has taken it, in the order it takes concurrent pauses and resumes.' })
  pauseSubscription(@Args(() => SubscriptionArgs) args: SubscriptionArgs, @Ctx() context: GraphQLContext): Promise<SubscriptionType> {
    return this.control(args, context, 'pause');
  }

  @Mutation(() => SubscriptionType, { description: 'Resumes a paused subscription; a period that fell due meanwhile is billed at once. Answered once its billing workflow has taken it, in the order it takes concurrent pauses and resumes.' })
  resumeSubscription(@Args(() => SubscriptionArgs) args: SubscriptionArgs, @Ctx() context: GraphQLContext): Promise<SubscriptionType> {
    return this.control(args, context, 'resume');
  }

  private async control(args: SubscriptionArgs, context: GraphQLContext, action: SubscriptionAction): Promise<SubscriptionType> {
    const tenantId = requireTenant(context, args.tenantId);
    const controller = context.services.subscriptionController;
    const controlled = await asDomainErrors(() => controlSubscription({ em: context.em, controller, deliveries: context.services.deliveryStarter, logger: context.log }, { tenantId, subscriptionId: args.id, action }));
    return toType(controlled, controlled.pendingAction);
  }
}
