import { defineEntity, p } from '@mikro-orm/core';
import { Tenant } from './tenant.entity.ts';

/** Where a tenant receives signed events. Secrets are stored encrypted: signing needs the clear value. */
const WebhookEndpointSchema = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    /** Provisioning identity within the tenant. */
    slug: p.string().length(64),
    url: p.string().length(2048),
    /** Event types delivered here; empty means every type. */
    eventTypes: p.array().default([]),
    secretCiphertext: p.text(),
    /** During a secret rotation deliveries are signed with both secrets. */
    previousSecretCiphertext: p.text().nullable(),
    disabledAt: p.datetime().nullable(),
    disabledReason: p.string().length(500).nullable(),
    /** Disabled by the operator: only the operator enables it again. */
    disabledByOperator: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['tenant', 'slug'] }],
  checks: [{ name: 'webhook_endpoints_operator_hold_is_disabled', expression: 'not "disabled_by_operator" or "disabled_at" is not null' }],
});
export class WebhookEndpoint extends WebhookEndpointSchema.class {}
WebhookEndpointSchema.setClass(WebhookEndpoint);

export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'endpoint_disabled'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** One event sent to one endpoint; its id is the Standard Webhooks `webhook-id`. */
const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.string().length(64).primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    endpoint: () => p.manyToOne(WebhookEndpoint).deleteRule('cascade'),
    eventType: p.string().length(100),
    /** The exact JSON body that is signed and sent. */
    body: p.text(),
    state: p.enum(() => [...DELIVERY_STATES]).default('pending'),
    attemptCount: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    completedAt: p.datetime().nullable(),
    /** When the unstarted-deliveries sweep started it (a gateway recorded it and never did). */
    sweptAt: p.datetime().nullable(),
    /** The runs after the first, each sent again on request after the delivery failed: the current run's number. */
    redeliveries: p.integer().default(0),
    /** When the current run was asked for (null: the first run). */
    redeliveredAt: p.datetime().nullable(),
    /** The attempts made before the current run; its own are numbered after them. */
    attemptsBeforeRun: p.integer().default(0),
  },
  indexes: [
    { properties: ['tenant', 'createdAt'] },
    { properties: ['endpoint', 'createdAt'] },
    { properties: ['completedAt'] },
    // The runs not attempted yet, oldest first: what the unstarted-deliveries sweep reads (migration 034).
    {
      name: 'webhook_deliveries_unstarted_runs_index',
      expression: `create index "webhook_deliveries_unstarted_runs_index" on "webhook_deliveries" ((coalesce("redelivered_at", "created_at"))) where state = 'pending' and swept_at is null and attempt_count = attempts_before_run`,
    },
    // A tenant's deliveries in one state, newest first (`webhookDeliveries(state:)`).
    { name: 'webhook_deliveries_tenant_state_index', properties: ['tenant', 'state', 'createdAt'] },
  ],
});
export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);

/** One HTTP attempt of a delivery: what happened, how long it took. */
const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  properties: {
    id: p.integer().primary().autoincrement(),
    delivery: () => p.manyToOne(WebhookDelivery).deleteRule('cascade'),
    attemptNumber: p.integer(),
    attemptedAt: p.datetime(),
    httpStatus: p.integer().nullable(),
    latencyMs: p.integer(),
    error: p.string().length(1000).nullable(),
    /** First bytes of the receiver's answer, for debugging. */
    responseSnippet: p.string().length(1000).nullable(),
  },
  uniques: [{ properties: ['delivery', 'attemptNumber'] }],
});
export class WebhookAttempt extends WebhookAttemptSchema.class {}
WebhookAttemptSchema.setClass(WebhookAttempt);
