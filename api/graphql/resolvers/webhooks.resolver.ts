import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { DomainError } from '../../../domain/errors.ts';
import { dispatchWebhookEvent } from '../../../services/webhooks/dispatch.ts';
import { WebhookDelivery, WebhookEndpoint } from '../../../schema/entities/index.ts';
import { SendTestWebhookArgs, TenantArgs, WebhookDeliveriesArgs, WebhookDeliveryType, WebhookEndpointType } from '../../../schema/graphql/webhook.type.ts';
import { requireTenant, type GraphQLContext } from '../context.ts';
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
      { tenant, ...(args.endpointId ? { endpoint: args.endpointId } : {}) },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: args.limit },
    );
    return deliveries.map((d) => ({
      id: d.id,
      endpointId: d.endpoint.id,
      eventType: d.eventType,
      state: String(d.state),
      attemptCount: d.attemptCount,
      createdAt: d.createdAt,
      completedAt: d.completedAt ?? null,
    }));
  }

  @Mutation(() => [String], { description: 'Sends a signed `webhook.test` event to one endpoint; returns the delivery ids' })
  async sendTestWebhook(@Args(() => SendTestWebhookArgs) { endpointId, tenantId }: SendTestWebhookArgs, @Ctx() context: GraphQLContext): Promise<string[]> {
    const tenant = requireTenant(context, tenantId);
    const endpoint = await context.em.findOne(WebhookEndpoint, { id: endpointId, tenant });
    if (!endpoint) throw new DomainError('not_found', 'Webhook endpoint not found', { field: 'endpointId' });
    if (endpoint.disabledAt) throw new DomainError('conflict', 'Webhook endpoint is disabled');
    return dispatchWebhookEvent(
      { em: context.em, starter: context.services.deliveryStarter },
      { tenantId: tenant, endpointIds: [endpoint.id], event: { type: 'webhook.test', timestamp: new Date().toISOString(), data: { endpointId: endpoint.id } } },
    );
  }
}
