import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';
import { DateTimeResolver, UUIDResolver } from 'graphql-scalars';
import { IsIn, Max, MaxLength, Min } from 'class-validator';
import { DELIVERY_STATES } from '../entities/webhook.entity.ts';

@ObjectType('WebhookAttempt', { description: 'One HTTP attempt of a webhook delivery' })
export class WebhookAttemptType {
  @Field(() => Int)
  attemptNumber!: number;

  @Field(() => DateTimeResolver)
  attemptedAt!: Date;

  @Field(() => Int, { nullable: true, description: 'HTTP status of the answer; null when none came (timeout, refused)' })
  httpStatus!: number | null;

  @Field(() => Int)
  latencyMs!: number;

  @Field(() => String, { nullable: true })
  error!: string | null;
}

@ObjectType('WebhookDelivery', { description: 'One event sent to one endpoint, with every attempt' })
/** `attempts` and `endpoint` are resolved per delivery, in batches (api/graphql/resolvers/webhook-delivery.resolver.ts). */
export class WebhookDeliveryType {
  @Field(() => ID, { description: 'The `webhook-id` header receivers deduplicate on' })
  id!: string;

  @Field(() => UUIDResolver)
  endpointId!: string;

  @Field(() => String)
  eventType!: string;

  @Field(() => String, { description: 'pending, delivered, failed or endpoint_disabled' })
  state!: string;

  @Field(() => Int)
  attemptCount!: number;

  @Field(() => Int, { description: 'How often it was sent again on request after it failed (`redeliverWebhook`)' })
  redeliveries!: number;

  @Field(() => DateTimeResolver)
  createdAt!: Date;

  @Field(() => DateTimeResolver, { nullable: true })
  completedAt!: Date | null;
}

@ObjectType('WebhookEndpoint')
export class WebhookEndpointType {
  @Field(() => UUIDResolver)
  id!: string;

  @Field(() => String)
  slug!: string;

  @Field(() => String, {
    description: 'The URL as provisioned. Plain text, not the URL scalar: an endpoint stored before URLs were checked may hold one no parser takes, and it must not fail the whole list',
  })
  url!: string;

  @Field(() => [String], { description: 'Event types delivered; empty means all' })
  eventTypes!: string[];

  @Field(() => DateTimeResolver, { nullable: true })
  disabledAt!: Date | null;

  @Field(() => String, { nullable: true })
  disabledReason!: string | null;

  @Field(() => Boolean, { description: 'Disabled by the operator: only the operator can enable it again' })
  disabledByOperator!: boolean;
}

/** The tenant an operator reads or acts for; a tenant's API key implies its own. */
@ArgsType()
export class TenantArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;
}

@ArgsType()
export class WebhookDeliveriesArgs extends TenantArgs {
  @Field(() => UUIDResolver, { nullable: true, description: 'Only deliveries to this endpoint' })
  endpointId?: string;

  @Field(() => String, { nullable: true, description: `Only deliveries in this state: ${DELIVERY_STATES.join(', ')}` })
  @IsIn([...DELIVERY_STATES])
  state?: string;

  @Field(() => Int, { defaultValue: 50, description: 'At most this many, newest first (1 to 200)' })
  @Min(1)
  @Max(200)
  limit!: number;
}

@ArgsType()
export class RedeliverWebhookArgs extends TenantArgs {
  @Field(() => ID, { description: 'A delivery that ended `failed` or `endpoint_disabled` (its endpoint enabled again)' })
  @MaxLength(64)
  deliveryId!: string;
}

@ArgsType()
export class WebhookEndpointArgs extends TenantArgs {
  @Field(() => UUIDResolver)
  endpointId!: string;
}

@ArgsType()
export class DisableWebhookEndpointArgs extends WebhookEndpointArgs {
  @Field(() => String, { nullable: true, description: 'Why, as `disabledReason` shows it (at most 500 characters)' })
  @MaxLength(500)
  reason?: string;
}

@ArgsType()
export class SendTestWebhookArgs extends TenantArgs {
  @Field(() => UUIDResolver)
  endpointId!: string;
}
