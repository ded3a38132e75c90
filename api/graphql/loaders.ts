import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookAttempt, WebhookEndpoint } from '../../schema/entities/index.ts';

/**
 * Look-ups that field resolvers make once per parent, batched into one query per request: a page of deliveries
 * (under any number of aliases) reads its attempts and endpoints with one statement each. Built per request, so
 * nothing is cached across callers or tenants.
 */
export interface GraphQLLoaders {
  /** Attempts of each delivery id, oldest first. */
  readonly deliveryAttempts: DataLoader<string, WebhookAttempt[]>;
  readonly webhookEndpoint: DataLoader<string, WebhookEndpoint | null>;
}

export function createLoaders(em: EntityManager): GraphQLLoaders {
  return {
    deliveryAttempts: new DataLoader(async (deliveryIds) => {
      const byDelivery = new Map<string, WebhookAttempt[]>(deliveryIds.map((id) => [id, []]));
      const attempts = await em.find(WebhookAttempt, { delivery: { $in: [...deliveryIds] } }, { orderBy: { attemptNumber: 'asc' } });
      for (const attempt of attempts) byDelivery.get(attempt.delivery.id)?.push(attempt);
      return deliveryIds.map((id) => byDelivery.get(id) ?? []);
    }),
    webhookEndpoint: new DataLoader(async (endpointIds) => {
      const endpoints = new Map((await em.find(WebhookEndpoint, { id: { $in: [...endpointIds] } })).map((endpoint) => [endpoint.id, endpoint]));
      return endpointIds.map((id) => endpoints.get(id) ?? null);
    }),
  };
}
