import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { DomainError } from '../../../domain/errors.ts';
import { dispatchWebhookEvent } from '../../../services/webhooks/dispatch.ts';
import { redeliverWebhook } from '../../../services/webhooks/redeliver.ts';
import { changeEndpointState } from '../../../services/webhooks/endpoint-state.ts';
import { WebhookDelivery, WebhookEndpoint, type DeliveryState } from '../../../schema/entities/index.ts';
import { DisableWebhookEndpointArgs, RedeliverWebhookArgs, SendTestWebhookArgs, WebhookEndpointArgs, TenantArgs, WebhookDeliveriesArgs, WebhookDeliveryType, WebhookEndpointType } from '../../../schema/graphql/webhook.type.ts';
import { actorOf, requireTenant, type GraphQLContext } from '../context.ts';
import { boundedListCost, pageCost } from '../cost.ts';

/** For the cost estimate only: tenants keep a handful of endpoints. */
const ENDPOINTS_PER_TENANT = 20;

export const toEndpointType = (e: WebhookEndpoint): WebhookEndpointType => ({
  id: e.id,
  slug: e.slug,
  url: e.url,
  eventTypes: e.eventTypes,
  disabledAt: e.disabledAt ?? null,
  disabledReason: e.disabledReason ?? null,
  disabledByOperator: e.disabledByOperator,
});

const toDeliveryType = (d: WebhookDelivery): WebhookDeliveryType => ({
  id: d.id,
  endpointId: d.endpoint.id,
  eventType: d.eventType,
  state: String(d.state),
  attemptCount: d.attemptCount,
  redeliveries: d.redeliveries,
  createdAt: d.createdAt,
  completedAt: d.completedAt ?? null,
});

@Resolver()
export class WebhooksResolver {
  @Query(() => [WebhookEndpointType], { description: "The tenant's webhook endpoints (secrets are never returned)", complexity: boundedListCost(ENDPOINTS_PER_TENANT, 1) })
  async webhookEndpoints(@Args(() => TenantArgs) { tenantId }: TenantArgs, @Ctx() context: GraphQLContext): Promise<WebhookEndpointType[]> {
    const tenant = requireTenant(context, tenantId);
    const endpoints = await context.em.find(WebhookEndpoint, { tenant }, { orderBy: { createdAt: 'asc' } });
    return endpoints.map(toEndpointType);
  }

  @Query(() => [WebhookDeliveryType], { description: 'Recent webhook deliveries with every attempt, newest first', complexity: pageCost('limit', 50) })
  async webhookDeliveries(@Args(() => WebhookDeliveriesArgs) args: WebhookDeliveriesArgs, @Ctx() context: GraphQLContext): Promise<WebhookDeliveryType[]> {
    const tenant = requireTenant(context, args.tenantId);
    const deliveries = await context.em.find(
      WebhookDelivery,
      { tenant, ...(args.endpointId ? { endpoint: args.endpointId } : {}), ...(args.state ? { state: args.state as DeliveryState } : {}) },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: args.limit },
    );
    return deliveries.map(toDeliveryType);
  }

  @Mutation(() => WebhookDeliveryType, {
    description:
      'Sends a failed delivery again under the same `webhook-id`, on the retry schedule (its attempts numbered after the earlier ones); answers it as claimed (`pending`). Refused (CONFLICT) unless it ended `failed` or `endpoint_disabled`, was sent again fewer than 5 times and its endpoint is enabled; of requests at once, one sends it',
  })
  async redeliverWebhook(@Args(() => RedeliverWebhookArgs) { deliveryId, tenantId }: RedeliverWebhookArgs, @Ctx() context: GraphQLContext): Promise<WebhookDeliveryType> {
    const tenant = requireTenant(context, tenantId);
    const claimed = await redeliverWebhook({ em: context.em.fork(), starter: context.services.deliveryStarter, logger: context.log }, { tenantId: tenant, deliveryId, actor: actorOf(context) });
    // As claimed: the run it started may already be attempting it.
    return {
      id: claimed.deliveryId,
      endpointId: claimed.endpointId,
      eventType: claimed.eventType,
      state: 'pending',
      attemptCount: claimed.attemptsBefore,
      redeliveries: claimed.redelivery,
      createdAt: claimed.createdAt,
      completedAt: null,
    };
  }

  @Mutation(() => WebhookEndpointType, {
    description:
      'Stops sending events to an endpoint: no new delivery goes there, and a pending one ends `endpoint_disabled` at its next attempt. Disabled by the operator (also when the tenant had disabled it), it stays disabled until the operator enables it. Disabling a disabled endpoint changes nothing',
  })
  async disableWebhookEndpoint(@Args(() => DisableWebhookEndpointArgs) args: DisableWebhookEndpointArgs, @Ctx() context: GraphQLContext): Promise<WebhookEndpointType> {
    const tenant = requireTenant(context, args.tenantId);
    const state = await changeEndpointState(context.em.fork(), {
      tenantId: tenant,
      endpointId: args.endpointId,
      enabled: false,
      ...(args.reason !== undefined ? { reason: args.reason } : {}),
      byOperator: context.caller.kind === 'operator',
      actor: actorOf(context),
    });
    return { ...toEndpointType(await context.em.fork().findOneOrFail(WebhookEndpoint, { id: args.endpointId, tenant })), ...state };
  }

  @Mutation(() => WebhookEndpointType, {
    description:
      'Sends later events to a disabled endpoint again (one a receiver disabled with 410 Gone included). Events raised while it was disabled were not recorded for it and are not sent; deliveries that ended `failed` or `endpoint_disabled` are sent again one by one with `redeliverWebhook`. One the operator disabled only the operator enables (FORBIDDEN for the tenant)',
  })
  async enableWebhookEndpoint(@Args(() => WebhookEndpointArgs) args: WebhookEndpointArgs, @Ctx() context: GraphQLContext): Promise<WebhookEndpointType> {
    const tenant = requireTenant(context, args.tenantId);
    const state = await changeEndpointState(context.em.fork(), { tenantId: tenant, endpointId: args.endpointId, enabled: true, byOperator: context.caller.kind === 'operator', actor: actorOf(context) });
    // The state this request left, not one another request set meanwhile.
    return { ...toEndpointType(await context.em.fork().findOneOrFail(WebhookEndpoint, { id: args.endpointId, tenant })), ...state };
  }

  @Mutation(() => [String], { description: 'Sends a signed `webhook.test` event to one endpoint; returns the delivery ids' })
  async sendTestWebhook(@Args(() => SendTestWebhookArgs) { endpointId, tenantId }: SendTestWebhookArgs, @Ctx() context: GraphQLContext): Promise<string[]> {
    const tenant = requireTenant(context, tenantId);
    const endpoint = await context.em.findOne(WebhookEndpoint, { id: endpointId, tenant });
    if (!endpoint) throw new DomainError('not_found', 'Webhook endpoint not found', { field: 'endpointId' });
    if (endpoint.disabledAt) throw new DomainError('conflict', 'Webhook endpoint is disabled');
    return dispatchWebhookEvent(
      { em: context.em, starter: context.services.deliveryStarter, logger: context.log },
      { tenantId: tenant, endpointIds: [endpoint.id], event: { type: 'webhook.test', timestamp: new Date().toISOString(), data: { endpointId: endpoint.id } } },
    );
  }
}
