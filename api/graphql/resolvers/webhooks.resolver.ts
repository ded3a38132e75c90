import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { DomainError } from '../../../domain/errors.ts';
import { dispatchWebhookEvent } from '../../../services/webhooks/dispatch.ts';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../../../schema/entities/index.ts';
import { SendTestWebhookArgs, TenantArgs, WebhookDeliveriesArgs, WebhookDeliveryType, WebhookEndpointType } from '../../../schema/graphql/webhook.type.ts';
import { requireTenant, type GraphQLContext } from '../context.ts';

@Resolver()
export class WebhooksResolver {
  @Query(() => [WebhookEndpointType], { description: "The tenant's webhook endpoints (secrets are never returned)" })
  async webhookEndpoints(@Args(() => TenantArgs) { tenantId }: TenantArgs, @Ctx() context: GraphQLContext): Promise<WebhookEndpointType[]> {
    const tenant = requireTenant(context, tenantId);
    const endpoints = await context.em.find(WebhookEndpoint, { tenant }, { orderBy: { createdAt: 'asc' } });
    return endpoints.map((e) => ({ id: e.id, slug: e.slug, url: e.url, eventTypes: e.eventTypes, disabledAt: e.disabledAt ?? null, disabledReason: e.disabledReason ?? null }));
  }

  @Query(() => [WebhookDeliveryType], { description: 'Recent webhook deliveries with every attempt, newest first' })
  async webhookDeliveries(@Args(() => WebhookDeliveriesArgs) args: WebhookDeliveriesArgs, @Ctx() context: GraphQLContext): Promise<WebhookDeliveryType[]> {
    const tenant = requireTenant(context, args.tenantId);
    const deliveries = await context.em.find(
      WebhookDelivery,
      { tenant, ...(args.endpointId ? { endpoint: args.endpointId } : {}) },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: args.limit },
    );
    const attempts = await context.em.find(WebhookAttempt, { delivery: { $in: deliveries.map((d) => d.id) } }, { orderBy: { attemptNumber: 'asc' } });
    return deliveries.map((d) => ({
      id: d.id,
      endpointId: d.endpoint.id,
      eventType: d.eventType,
      state: String(d.state),
      attemptCount: d.attemptCount,
      createdAt: d.createdAt,
      completedAt: d.completedAt ?? null,
      attempts: attempts
        .filter((a) => a.delivery.id === d.id)
        .map((a) => ({ attemptNumber: a.attemptNumber, attemptedAt: a.attemptedAt, httpStatus: a.httpStatus ?? null, latencyMs: a.latencyMs, error: a.error ?? null })),
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
