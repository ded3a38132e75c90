import 'reflect-metadata';
import { buildSchema } from 'type-graphql';
import type { GraphQLSchema } from 'graphql';
import { CardKeysResolver } from './resolvers/card-keys.resolver.ts';
import { EmailResolver } from './resolvers/email.resolver.ts';
import { CustomerLeadDataResolver, LeadsResolver } from './resolvers/leads.resolver.ts';
import { MerchantAccountsResolver } from './resolvers/merchant-accounts.resolver.ts';
import { MitigationResolver } from './resolvers/mitigation.resolver.ts';
import { OperatorResolver } from './resolvers/operator.resolver.ts';
import { StatusesResolver } from './resolvers/statuses.resolver.ts';
import { SubscriptionsResolver } from './resolvers/subscriptions.resolver.ts';
import { WebhookDeliveryResolver } from './resolvers/webhook-delivery.resolver.ts';
import { WebhooksResolver } from './resolvers/webhooks.resolver.ts';

export const RESOLVERS = [StatusesResolver, WebhooksResolver, WebhookDeliveryResolver, CardKeysResolver, OperatorResolver, LeadsResolver, CustomerLeadDataResolver, EmailResolver, MerchantAccountsResolver, MitigationResolver, SubscriptionsResolver] as const;

/**
 * Builds the executable schema; `npm run schema:emit` writes it to schema/schema.graphql. Arguments are
 * checked against their class-validator rules before a resolver runs.
 */
export function buildGatewaySchema(): Promise<GraphQLSchema> {
  return buildSchema({ resolvers: [...RESOLVERS], validate: true, emitSchemaFile: false });
}
