import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import { WebhookAttemptType, WebhookDeliveryType, WebhookEndpointType } from '../../../schema/graphql/webhook.type.ts';
import type { GraphQLContext } from '../context.ts';
import { boundedListCost } from '../cost.ts';
import { toEndpointType } from './webhooks.resolver.ts';

/**
 * For the cost estimate only: the attempts of the default retry schedule (a longer configured one is under-costed, and
 * so is a delivery sent again, rare and at most 5 runs more: costing every delivery for them would
 * refuse the pages clients read today).
 */
const ATTEMPTS_PER_DELIVERY = 8;

/** Fields read per delivery, through the request's loaders: one query for a whole page, whatever the aliases. */
@Resolver(() => WebhookDeliveryType)
export class WebhookDeliveryResolver {
  @FieldResolver(() => [WebhookAttemptType], { description: 'Every HTTP attempt, oldest first', complexity: boundedListCost(ATTEMPTS_PER_DELIVERY) })
  async attempts(@Root() delivery: WebhookDeliveryType, @Ctx() context: GraphQLContext): Promise<WebhookAttemptType[]> {
    const attempts = await context.loaders.deliveryAttempts.load(delivery.id);
    return attempts.map((a) => ({ attemptNumber: a.attemptNumber, attemptedAt: a.attemptedAt, httpStatus: a.httpStatus ?? null, latencyMs: a.latencyMs, error: a.error ?? null }));
  }

  @FieldResolver(() => WebhookEndpointType, { description: 'The endpoint the delivery is addressed to' })
  async endpoint(@Root() delivery: WebhookDeliveryType, @Ctx() context: GraphQLContext): Promise<WebhookEndpointType> {
    // Deliveries cascade with their endpoint, so the endpoint of a delivery just read exists.
    const endpoint = await context.loaders.webhookEndpoint.load(delivery.endpointId);
    return toEndpointType(endpoint!);
  }
}
