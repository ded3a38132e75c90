import { ApplicationFailure } from '@temporalio/common';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { dispatchWebhookEvent, recordWebhookDeliveries } from '../services/webhooks/dispatch.ts';
import { redeliverWebhook } from '../services/webhooks/redeliver.ts';
import { findUnstartedDeliveries, markDeliveriesSwept } from '../data/queries/webhook-deliveries.ts';
import { createWebhookDeliveryActivities } from '../activities/webhooks/webhook-delivery.activities.ts';
import type { unstartedDeliveriesWorkflow } from '../workflows/maintenance/unstarted-deliveries.workflow.ts';
import { temporalDeliveryStarter } from '../adapters/temporal/webhook-delivery-starter.ts';
import { WebhookEndpoint } from '../schema/entities/index.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant } from './support/tenants.ts';
import { startWebhookReceiver, type Behaviour } from './support/webhook-receiver.ts';
import { refuseRows } from './support/refusals.ts';

let app: TestApp;

// A schedule in seconds so the whole retry ladder runs inside a test.
const SCHEDULE = [0, 1, 1, 1];
const TIMEOUT_MS = 1_500;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(','), WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
  await app.startWorker();
});
afterAll(() => app?.close());

async function deliverTo(behaviour: Behaviour) {
  const secret = generateWebhookSecret();
  const receiver = await startWebhookReceiver(secret, behaviour);
  const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'main', url: receiver.url, secret }] });
  const endpointId = tenant.result.webhookEndpoints[0]!.id;
  const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
  const [deliveryId] = await dispatchWebhookEvent(
    { em: app.orm.em.fork(), starter, logger: app.logger },
    { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: { leadId: 'lead-1', amount: '29.99' } } },
  );
  const result = await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId!)).result();
  return { receiver, tenant, endpointId, deliveryId: deliveryId!, result };
}

async function deliveryFromGraphQL(apiKey: string, deliveryId: string) {
  const response = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ query: '{ webhookDeliveries { id state attemptCount redeliveries attempts { attemptNumber httpStatus latencyMs error } } }' }),
  });
  const body = (await response.json()) as any;
  expect(body.errors).toBeUndefined();
  return body.data.webhookDeliveries.find((d: { id: string }) => d.id === deliveryId);
}

describe('signed webhook delivery', () => {
  it('delivers on the first attempt with a signature the standardwebhooks package verifies', async () => {
    const { receiver, tenant, deliveryId, result } = await deliverTo(() => ({ status: 204 }));
    try {
      expect(result).toBe('delivered');
      expect(receiver.received).toHaveLength(1);
      const [request] = receiver.received;
      expect(request!.verified).toBe(true);
      expect(request!.headers['webhook-id']).toBe(deliveryId);
      expect(request!.payload).toEqual({ type: 'customer_lead.paid', timestamp: expect.any(String), data: { leadId: 'lead-1', amount: '29.99' } });
      const delivery = await deliveryFromGraphQL(tenant.apiKey, deliveryId);
      expect(delivery).toMatchObject({ state: 'delivered', attemptCount: 1, attempts: [{ attemptNumber: 1, httpStatus: 204, error: null }] });
      expect(delivery.attempts[0].latencyMs).toBeGreaterThanOrEqual(0);
    } finally {
      await receiver.close();
    }
  });

  it('delivers once to a receiver whose answer holds a NUL byte, and keeps a readable snippet of it', async () => {
    const { receiver, tenant, deliveryId, result } = await deliverTo(() => ({ status: 200, body: 'ok\u0000done' }));
    try {
      expect(result).toBe('delivered');
      expect(receiver.received).toHaveLength(1);
      expect(await deliveryFromGraphQL(tenant.apiKey, deliveryId)).toMatchObject({ state: 'delivered', attempts: [{ attemptNumber: 1, httpStatus: 200 }] });
      const [attempt] = await app.orm.em.fork().execute<{ response_snippet: string }[]>(`select response_snippet from webhook_attempts where delivery_id = ?`, [deliveryId]);
      expect(attempt!.response_snippet).toBe('ok\ufffddone');
    } finally {
      await receiver.close();
    }
  });

  it('never sends an event again because its attempt could not be recorded', async () => {
    const allow = await refuseRows(app.orm, 'webhook_attempts', 'insert', `new.response_snippet = 'refuse-this-attempt'`);
    try {
      const { receiver, tenant, deliveryId, result } = await deliverTo(() => ({ status: 200, body: 'refuse-this-attempt' }));
      try {
        expect(result).toBe('delivered');
        expect(receiver.received).toHaveLength(1);
        expect(await deliveryFromGraphQL(tenant.apiKey, deliveryId)).toMatchObject({ state: 'delivered', attempts: [] });
      } finally {
        await receiver.close();
      }
    } finally {
      await allow();
    }
  });

  it('outlasts the database being away for longer than a few retries: the delivered event ends recorded delivered', async () => {
    const secret = generateWebhookSecret();
    const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
    const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'main', url: receiver.url, secret }] });
    const endpointId = tenant.result.webhookEndpoints[0]!.id;
    // For 18 seconds every change of this endpoint's delivery states fails as PostgreSQL does while it cannot take
    // connections (57P03, retryable): longer than the 5 tries in 15 seconds deliveries used to get.
    const allow = await refuseRows(
      app.orm,
      'webhook_deliveries',
      'update',
      `new.endpoint_id = '${String(endpointId).replaceAll("'", '')}' and new.state is distinct from old.state and clock_timestamp() < '${new Date(Date.now() + 18_000).toISOString()}'::timestamptz`,
      '57P03',
    );
    try {
      const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
      const [deliveryId] = await dispatchWebhookEvent(
        { em: app.orm.em.fork(), starter, logger: app.logger },
        { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: { leadId: 'lead-2', amount: '9.99' } } },
      );
      expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId!)).result()).toBe('delivered');
      expect(receiver.received).toHaveLength(1);
      expect(await deliveryFromGraphQL(tenant.apiKey, deliveryId!)).toMatchObject({ state: 'delivered', attemptCount: 1 });
    } finally {
      await receiver.close();
      await allow();
    }
  });

  it('fails at once, not retried for a day, when the endpoint\'s signing secret cannot be opened', async () => {
    const secret = generateWebhookSecret();
    const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
    try {
      const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'main', url: receiver.url, secret }] });
      // As a secret stored under another data-encryption key reads.
      await app.orm.em.fork().execute(`update webhook_endpoints set secret_ciphertext = 'v1.not-a-sealed-secret' where tenant_id = ?`, [tenant.id]);
      const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
      const [deliveryId] = await dispatchWebhookEvent(
        { em: app.orm.em.fork(), starter, logger: app.logger },
        { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: { leadId: 'lead-3', amount: '1.00' } } },
      );
      const failure = await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId!)).result().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect(((failure as WorkflowFailedError).cause?.cause as ApplicationFailure | undefined)?.type).toBe('EndpointSecretUnreadable');
      expect(receiver.received).toHaveLength(0);
      // The run ended its delivery failed: once the secret is mended, it can be sent again.
      expect(await deliveryFromGraphQL(tenant.apiKey, deliveryId!)).toMatchObject({ state: 'failed', attemptCount: 0 });
      await app.orm.em.fork().execute(`update webhook_endpoints set secret_ciphertext = ? where tenant_id = ?`, [app.secretBox.seal(secret), tenant.id]);
      await redeliverWebhook({ em: app.orm.em.fork(), starter, logger: app.logger }, { tenantId: tenant.id, deliveryId: deliveryId!, actor: 'test' });
      expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookRedelivery(deliveryId!, 1)).result()).toBe('delivered');
      expect(receiver.received.map((r) => r.verified)).toEqual([true]);
    } finally {
      await receiver.close();
    }
  });

  it('retries after two failures and records all three attempts', async () => {
    const { receiver, tenant, deliveryId, result } = await deliverTo((n) => (n <= 2 ? { status: 503 } : { status: 200 }));
    try {
      expect(result).toBe('delivered');
      expect(receiver.received).toHaveLength(3);
      expect(receiver.received.every((r) => r.verified)).toBe(true);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([deliveryId]));
      const delivery = await deliveryFromGraphQL(tenant.apiKey, deliveryId);
      expect(delivery.state).toBe('delivered');
      expect(delivery.attempts.map((a: { httpStatus: number }) => a.httpStatus)).toEqual([503, 503, 200]);
    } finally {
      await receiver.close();
    }
  });

  it('stops at 410 Gone and disables the endpoint', async () => {
    const { receiver, tenant, endpointId, deliveryId, result } = await deliverTo(() => ({ status: 410 }));
    try {
      expect(result).toBe('endpoint_disabled');
      expect(receiver.received).toHaveLength(1);
      const endpoint = await app.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpointId });
      expect(endpoint.disabledAt).toBeInstanceOf(Date);
      const delivery = await deliveryFromGraphQL(tenant.apiKey, deliveryId);
      expect(delivery).toMatchObject({ state: 'endpoint_disabled', attemptCount: 1, attempts: [{ httpStatus: 410 }] });
      // A disabled endpoint receives no further event.
      const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
      const more = await dispatchWebhookEvent({ em: app.orm.em.fork(), starter, logger: app.logger }, { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: {} } });
      expect(more).toEqual([]);

      // The merchant mends the receiver and provisions the endpoint's new address: it is enabled again.
      const secret = generateWebhookSecret();
      const mended = await startWebhookReceiver(secret, () => ({ status: 204 }));
      try {
        await provision(
          { em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor: 'test' },
          parseFixture({ tenants: [{ slug: tenant.result.slug, name: 'Mended', clientId: tenant.clientId, webhookEndpoints: [{ slug: 'main', url: mended.url, secret }] }] }),
        );
        expect((await app.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpointId })).disabledAt).toBeNull();
        const [again] = await dispatchWebhookEvent({ em: app.orm.em.fork(), starter, logger: app.logger }, { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: {} } });
        expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(again!)).result()).toBe('delivered');
        expect(mended.received.map((r) => r.verified)).toEqual([true]);
      } finally {
        await mended.close();
      }
    } finally {
      await receiver.close();
    }
  });

  it('reads no more of an answer than its snippet keeps: a receiver streaming without end is delivered, not timed out', async () => {
    const secret = generateWebhookSecret();
    const endless = http.createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const more = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', more);
      };
      more();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/hooks`;
      const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'endless', url, secret }] });
      const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
      const [deliveryId] = await dispatchWebhookEvent({ em: app.orm.em.fork(), starter, logger: app.logger }, { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: {} } });
      expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId!)).result()).toBe('delivered');
      const delivery = await deliveryFromGraphQL(tenant.apiKey, deliveryId!);
      // The snippet's bytes were read and the rest left: reading the endless answer would have timed the attempt out.
      expect(delivery.attempts).toEqual([expect.objectContaining({ attemptNumber: 1, httpStatus: 200, error: null })]);
    } finally {
      endless.closeAllConnections();
      await new Promise<void>((resolve) => endless.close(() => resolve()));
    }
  });

  it("fails at once, not retried for a day, when the endpoint's secret is no base64 `standardwebhooks` can read; provisioning refuses one", async () => {
    const unusable = `whsec_AAAA=AAA${'A'.repeat(28)}`;
    const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'main', url: 'http://127.0.0.1:65535/hooks' }] });
    const refusal = (() => {
      try {
        parseFixture({ tenants: [{ slug: tenant.result.slug, name: 'T', clientId: tenant.clientId, webhookEndpoints: [{ slug: 'main', url: 'http://127.0.0.1:65535/hooks', secret: unusable }] }] });
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(refusal).toMatch(/secret/);
    // The refusal names the field, never the secret itself.
    expect(refusal).not.toContain(unusable);
    // One stored before provisioning refused it.
    const em = app.orm.em.fork();
    await em.nativeUpdate(WebhookEndpoint, { id: tenant.result.webhookEndpoints[0]!.id }, { secretCiphertext: app.secretBox.seal(unusable) });
    const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
    const [deliveryId] = await dispatchWebhookEvent({ em: app.orm.em.fork(), starter, logger: app.logger }, { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: {} } });
    const started = Date.now();
    const ended = await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId!)).result().catch((error: unknown) => error);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ended).toBeInstanceOf(WorkflowFailedError);
    expect(((ended as WorkflowFailedError).cause?.cause as ApplicationFailure | undefined)?.type).toBe('EndpointSecretUnreadable');
  });

  it('counts a receiver that hangs past the timeout as a failed attempt', async () => {
    const { receiver, tenant, deliveryId, result } = await deliverTo((n) => (n === 1 ? 'hang' : { status: 200 }));
    try {
      expect(result).toBe('delivered');
      const delivery = await deliveryFromGraphQL(tenant.apiKey, deliveryId);
      expect(delivery.attempts).toHaveLength(2);
      expect(delivery.attempts[0]).toMatchObject({ attemptNumber: 1, httpStatus: null, error: expect.stringContaining('Timed out') });
      expect(delivery.attempts[0].latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(delivery.attempts[1]).toMatchObject({ attemptNumber: 2, httpStatus: 200 });
    } finally {
      await receiver.close();
    }
  });

  it('records why a connection failed (refused, here), not only that fetch failed', async () => {
    // A port nothing listens on: each attempt's connection is refused.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'main', url: `http://127.0.0.1:${port}/in`, secret: generateWebhookSecret() }] });
    const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
    const [deliveryId] = await dispatchWebhookEvent(
      { em: app.orm.em.fork(), starter, logger: app.logger },
      { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: { leadId: 'lead-2' } } },
    );
    expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId!)).result()).toBe('failed');
    const delivery = await deliveryFromGraphQL(tenant.apiKey, deliveryId!);
    expect(delivery.attempts[0]).toMatchObject({ httpStatus: null, error: expect.stringMatching(/^TypeError: fetch failed \(ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/) });
  });

  it('gives up after the last scheduled attempt and honours Retry-After', async () => {
    const started = Date.now();
    const { receiver, tenant, deliveryId, result } = await deliverTo(() => ({ status: 500, headers: { 'retry-after': '2' } }));
    try {
      expect(result).toBe('failed');
      expect(receiver.received).toHaveLength(SCHEDULE.length);
      // Three waits of max(1 s, Retry-After 2 s).
      expect(Date.now() - started).toBeGreaterThanOrEqual(6_000);
      const delivery = await deliveryFromGraphQL(tenant.apiKey, deliveryId);
      expect(delivery).toMatchObject({ state: 'failed', attemptCount: SCHEDULE.length });
    } finally {
      await receiver.close();
    }
  });

  it('signs with both secrets during a rotation', async () => {
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const receiver = await startWebhookReceiver(oldSecret, () => ({ status: 200 }));
    try {
      const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'rot', url: receiver.url, secret: oldSecret }] });
      await provision(
        { em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor: 'test' },
        parseFixture({ tenants: [{ slug: tenant.result.slug, name: `Tenant`, clientId: tenant.clientId, webhookEndpoints: [{ slug: 'rot', url: receiver.url, secret: newSecret }] }] }),
      );
      const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
      const [id] = await dispatchWebhookEvent({ em: app.orm.em.fork(), starter, logger: app.logger }, { tenantId: tenant.id, event: { type: 'webhook.test', timestamp: new Date().toISOString(), data: {} } });
      await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(id!)).result();
      const signatures = String(receiver.received[0]!.headers['webhook-signature']).split(' ');
      expect(signatures).toHaveLength(2);
      expect(receiver.received[0]!.verified).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});

describe('a test event', () => {
  it('reaches the endpoint it is sent to, whatever event types that endpoint subscribes to', async () => {
    const secret = generateWebhookSecret();
    const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
    try {
      const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'payments-only', url: receiver.url, secret, eventTypes: ['transaction.completed'] }] });
      const endpointId = tenant.result.webhookEndpoints[0]!.id;
      const response = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
        body: JSON.stringify({ query: 'mutation($id: UUID!) { sendTestWebhook(endpointId: $id) }', variables: { id: endpointId } }),
      });
      const body = (await response.json()) as { data: { sendTestWebhook: string[] } };
      expect(body.data.sendTestWebhook).toHaveLength(1);
      const result = await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(body.data.sendTestWebhook[0]!)).result();
      expect(result).toBe('delivered');
      expect(receiver.received.map((request) => [request.verified, JSON.parse(request.body).type])).toEqual([[true, 'webhook.test']]);
    } finally {
      await receiver.close();
    }
  });
});

describe('an event recorded twice', () => {
  it('keeps one delivery per endpoint under the same webhook-id when the event has a key (a retried activity)', async () => {
    const tenant = await createTestTenant(app, {
      webhookEndpoints: [
        { slug: 'a', url: 'http://127.0.0.1:65535/a', secret: generateWebhookSecret() },
        { slug: 'b', url: 'http://127.0.0.1:65535/b', secret: generateWebhookSecret() },
      ],
    });
    const event = { type: 'transaction.completed', timestamp: '2026-11-22T10:00:00.000Z', data: { submitOrderId: 7 } } as const;
    const record = () => recordWebhookDeliveries(app.orm.em.fork(), { tenantId: tenant.id, event, eventKey: 'transaction.completed/order-7' });
    const [first, again] = await Promise.all([record(), record()]);
    expect(first.map((d) => d.deliveryId).sort()).toEqual(again.map((d) => d.deliveryId).sort());
    expect(first).toHaveLength(2);
    const rows = await app.orm.em.fork().execute(`select id from webhook_deliveries where tenant_id = ?`, [tenant.id]);
    expect(rows).toHaveLength(2);

    // Without a key every recording is a new event.
    await recordWebhookDeliveries(app.orm.em.fork(), { tenantId: tenant.id, event });
    expect(await app.orm.em.fork().execute(`select id from webhook_deliveries where tenant_id = ?`, [tenant.id])).toHaveLength(4);
  });
});

describe('a failed delivery sent again on request', () => {
  const ask = async (apiKey: string, query: string, variables: Record<string, unknown> = {}) => {
    const response = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as { data?: any; errors?: { message: string; extensions: { code: string } }[] };
  };
  const redeliver = (apiKey: string, deliveryId: string) =>
    ask(apiKey, 'mutation($id: ID!) { redeliverWebhook(deliveryId: $id) { id state attemptCount redeliveries } }', { id: deliveryId });
  const auditOf = (tenantId: number, action: string) =>
    app.orm.em.fork().execute<{ entity_id: string; changes: Record<string, unknown> }[]>(`select entity_id, changes from audit_entries where tenant_id = ? and action = ?`, [tenantId, action]);

  it('goes out again under the same webhook-id, its attempts numbered after the first run\'s, once however many ask at once', async () => {
    let mended = false;
    const { receiver, tenant, deliveryId, result } = await deliverTo(() => (mended ? { status: 204 } : { status: 500 }));
    try {
      expect(result).toBe('failed');
      expect(receiver.received).toHaveLength(SCHEDULE.length);
      const failed = await ask(tenant.apiKey, '{ webhookDeliveries(state: "failed") { id state } }');
      expect(failed.data.webhookDeliveries).toEqual([{ id: deliveryId, state: 'failed' }]);
      expect((await ask(tenant.apiKey, '{ webhookDeliveries(state: "delivered") { id } }')).data.webhookDeliveries).toEqual([]);

      // The receiver is mended; eight requests to send it again arrive at once: one sends it, the others are refused.
      mended = true;
      const answers = await Promise.all(Array.from({ length: 8 }, () => redeliver(tenant.apiKey, deliveryId)));
      const accepted = answers.filter((a) => a.data?.redeliverWebhook);
      expect(accepted.map((a) => a.data.redeliverWebhook)).toEqual([{ id: deliveryId, state: 'pending', attemptCount: SCHEDULE.length, redeliveries: 1 }]);
      expect(answers.filter((a) => a.errors).map((a) => a.errors![0]!.extensions.code)).toEqual(Array(7).fill('CONFLICT'));

      expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookRedelivery(deliveryId, 1)).result()).toBe('delivered');
      expect(receiver.received).toHaveLength(SCHEDULE.length + 1);
      const last = receiver.received.at(-1)!;
      expect(last.verified).toBe(true);
      expect(last.headers['webhook-id']).toBe(deliveryId);
      expect(last.body).toBe(receiver.received[0]!.body);
      const delivery = await deliveryFromGraphQL(tenant.apiKey, deliveryId);
      expect(delivery).toMatchObject({ state: 'delivered', attemptCount: SCHEDULE.length + 1 });
      expect(delivery.attempts.map((a: { attemptNumber: number; httpStatus: number }) => [a.attemptNumber, a.httpStatus])).toEqual([
        [1, 500],
        [2, 500],
        [3, 500],
        [4, 500],
        [5, 204],
      ]);
      expect(await auditOf(tenant.id, 'webhook_delivery.redelivered')).toEqual([{ entity_id: deliveryId, changes: { redelivery: 1, attemptsBefore: SCHEDULE.length } }]);
      // Delivered, it is not sent again.
      expect((await redeliver(tenant.apiKey, deliveryId)).errors![0]!.extensions.code).toBe('CONFLICT');
      expect(receiver.received).toHaveLength(SCHEDULE.length + 1);
      // A late step of the first run (a retry after its worker died) neither sends it nor changes its state.
      const { attemptWebhookDelivery, concludeWebhookDelivery } = createWebhookDeliveryActivities({ orm: app.orm, secretBox: app.secretBox, logger: app.logger });
      expect(await attemptWebhookDelivery({ deliveryId, attemptNumber: 3, timeoutMs: TIMEOUT_MS })).toEqual({ kind: 'superseded' });
      await concludeWebhookDelivery({ deliveryId, conclusion: 'failed' });
      expect(await deliveryFromGraphQL(tenant.apiKey, deliveryId)).toMatchObject({ state: 'delivered', attemptCount: SCHEDULE.length + 1 });
      expect(receiver.received).toHaveLength(SCHEDULE.length + 1);
    } finally {
      await receiver.close();
    }
  });

  it("waits for its endpoint to be enabled again after a 410, and is never another tenant's to send", async () => {
    let gone = true;
    const { receiver, tenant, endpointId, deliveryId, result } = await deliverTo(() => (gone ? { status: 410 } : { status: 200 }));
    const other = await createTestTenant(app);
    try {
      expect(result).toBe('endpoint_disabled');
      expect((await redeliver(other.apiKey, deliveryId)).errors![0]!.extensions.code).toBe('NOT_FOUND');
      const refused = await redeliver(tenant.apiKey, deliveryId);
      expect(refused.errors![0]).toMatchObject({ extensions: { code: 'CONFLICT' }, message: expect.stringContaining('enable it first') });
      // Another tenant can neither enable nor disable the endpoint.
      for (const mutation of ['enableWebhookEndpoint', 'disableWebhookEndpoint']) {
        const answer = await ask(other.apiKey, `mutation($id: UUID!) { ${mutation}(endpointId: $id) { id } }`, { id: endpointId });
        expect(answer.errors![0]!.extensions.code).toBe('NOT_FOUND');
      }

      gone = false;
      const enabled = await ask(tenant.apiKey, 'mutation($id: UUID!) { enableWebhookEndpoint(endpointId: $id) { id disabledAt disabledReason } }', { id: endpointId });
      expect(enabled.data.enableWebhookEndpoint).toEqual({ id: endpointId, disabledAt: null, disabledReason: null });
      expect((await redeliver(tenant.apiKey, deliveryId)).data.redeliverWebhook).toMatchObject({ state: 'pending', redeliveries: 1 });
      expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookRedelivery(deliveryId, 1)).result()).toBe('delivered');
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([deliveryId, deliveryId]);

      // Disabled on request: no new event goes there; disabling it again changes nothing more.
      const disable = () => ask(tenant.apiKey, 'mutation($id: UUID!) { disableWebhookEndpoint(endpointId: $id, reason: "receiver under maintenance") { disabledAt disabledReason } }', { id: endpointId });
      // Six disables at once: one changes it, and one audit entry says so.
      const [disabled] = await Promise.all(Array.from({ length: 6 }, () => disable()));
      expect(disabled!.data.disableWebhookEndpoint).toEqual({ disabledAt: expect.any(String), disabledReason: 'receiver under maintenance' });
      expect((await disable()).data.disableWebhookEndpoint).toEqual(disabled!.data.disableWebhookEndpoint);
      const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
      expect(await dispatchWebhookEvent({ em: app.orm.em.fork(), starter, logger: app.logger }, { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: {} } })).toEqual([]);
      // The receiver's 410 is audited as a disable too, then the one on request.
      expect((await auditOf(tenant.id, 'webhook_endpoint.disabled')).map((a) => a.changes.reason)).toEqual(['Receiver answered 410 Gone', 'receiver under maintenance']);
      expect(await auditOf(tenant.id, 'webhook_endpoint.enabled')).toHaveLength(1);
      expect(await auditOf(other.id, 'webhook_endpoint.enabled')).toEqual([]);
      // Provisioning a new address mends a receiver that answered 410, never an endpoint disabled on request.
      await provision(
        { em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor: 'test' },
        parseFixture({ tenants: [{ slug: tenant.result.slug, name: 'Moved', clientId: tenant.clientId, webhookEndpoints: [{ slug: 'main', url: `${receiver.url}/moved` }] }] }),
      );
      expect(await app.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpointId })).toMatchObject({ disabledReason: 'receiver under maintenance', url: `${receiver.url}/moved` });
    } finally {
      await receiver.close();
    }
  });

  it('an endpoint the operator disabled is the operator’s to enable, also one its tenant had disabled first', async () => {
    const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'main', url: 'https://receiver.example.com/hooks' }] });
    const endpointId = tenant.result.webhookEndpoints[0]!.id;
    const operator = app.config.operatorToken!;
    const state = '{ id disabledAt disabledReason disabledByOperator }';
    const asTenant = (mutation: string, args = '') => ask(tenant.apiKey, `mutation($id: UUID!) { ${mutation}(endpointId: $id${args}) ${state} }`, { id: endpointId });
    const asOperator = (mutation: string, args = '') => ask(operator, `mutation($id: UUID!, $tenantId: Int) { ${mutation}(endpointId: $id, tenantId: $tenantId${args}) ${state} }`, { id: endpointId, tenantId: tenant.id });

    // The tenant disabled it for maintenance; the operator then holds it, keeping the tenant's reason when giving none.
    expect((await asTenant('disableWebhookEndpoint', ', reason: "maintenance"')).data.disableWebhookEndpoint).toMatchObject({ disabledReason: 'maintenance', disabledByOperator: false });
    // Four operators' disables at once: one holds it, and one audit entry says so.
    const held = await Promise.all(Array.from({ length: 4 }, () => asOperator('disableWebhookEndpoint')));
    expect(held.map((answer) => answer.data.disableWebhookEndpoint)).toEqual(Array(4).fill({ id: endpointId, disabledAt: expect.any(String), disabledReason: 'maintenance', disabledByOperator: true }));
    expect((await auditOf(tenant.id, 'webhook_endpoint.disabled')).map((a) => a.changes)).toEqual([{ reason: 'maintenance' }, { reason: null, byOperator: true }]);

    // The tenant's enable is refused and changes nothing; its disable changes nothing either.
    const refused = await asTenant('enableWebhookEndpoint');
    expect(refused.errors![0]).toMatchObject({ message: 'The operator disabled this endpoint: only the operator can enable it', extensions: { code: 'FORBIDDEN' } });
    expect((await asTenant('disableWebhookEndpoint', ', reason: "mine"')).data.disableWebhookEndpoint).toMatchObject({ disabledReason: 'maintenance', disabledByOperator: true });
    expect((await ask(tenant.apiKey, '{ webhookEndpoints { id disabledByOperator } }')).data.webhookEndpoints).toEqual([{ id: endpointId, disabledByOperator: true }]);
    expect(await auditOf(tenant.id, 'webhook_endpoint.enabled')).toEqual([]);

    // The operator enables it: sent to again, and the tenant's own switches work as before.
    expect((await asOperator('enableWebhookEndpoint')).data.enableWebhookEndpoint).toEqual({ id: endpointId, disabledAt: null, disabledReason: null, disabledByOperator: false });
    expect((await asTenant('disableWebhookEndpoint')).data.disableWebhookEndpoint).toMatchObject({ disabledReason: 'Disabled on request', disabledByOperator: false });
    expect((await asTenant('enableWebhookEndpoint')).data.enableWebhookEndpoint).toMatchObject({ disabledAt: null, disabledByOperator: false });
    // An enabled endpoint the operator disables gets the operator's reason.
    expect((await asOperator('disableWebhookEndpoint', ', reason: "answers with 30 s delays"')).data.disableWebhookEndpoint).toMatchObject({ disabledReason: 'answers with 30 s delays', disabledByOperator: true });

    // Disables and enables at once: each answers the state its own request left, never one another set meanwhile.
    await asOperator('enableWebhookEndpoint');
    const mixed = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? asTenant('enableWebhookEndpoint') : asTenant('disableWebhookEndpoint'))));
    mixed.forEach((answer, i) => {
      const state = answer.data[i % 2 ? 'enableWebhookEndpoint' : 'disableWebhookEndpoint'];
      if (i % 2) expect(state, `enable ${i}`).toMatchObject({ disabledAt: null, disabledReason: null });
      else expect(state, `disable ${i}`).toMatchObject({ disabledAt: expect.any(String), disabledReason: 'Disabled on request' });
    });
  });

  it('is started by the unstarted-deliveries sweep when its gateway could not reach Temporal', async () => {
    let mended = false;
    const { receiver, tenant, deliveryId, result } = await deliverTo(() => (mended ? { status: 204 } : { status: 500 }));
    // A real client whose server is not there (and which does not retry): every start fails.
    const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: '1s', interceptors: [] });
    try {
      expect(result).toBe('failed');
      mended = true;
      const starter = temporalDeliveryStarter({ client: new Client({ connection }), taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS });
      // A test event sent meanwhile is recorded and answered (the sweep sends it), never refused as an error.
      const [testEvent] = await dispatchWebhookEvent(
        { em: app.orm.em.fork(), starter, logger: app.logger },
        { tenantId: tenant.id, endpointIds: [tenant.result.webhookEndpoints[0]!.id], event: { type: 'webhook.test', timestamp: new Date().toISOString(), data: {} } },
      );
      expect((await app.orm.em.fork().execute<{ state: string }[]>(`select state from webhook_deliveries where id = ?`, [testEvent]))[0]).toEqual({ state: 'pending' });
      // Accepted all the same: the claim is kept, and audited.
      expect(await redeliverWebhook({ em: app.orm.em.fork(), starter, logger: app.logger }, { tenantId: tenant.id, deliveryId, actor: 'test' })).toMatchObject({ redelivery: 1, attemptsBefore: SCHEDULE.length });
      expect(await auditOf(tenant.id, 'webhook_delivery.redelivered')).toHaveLength(1);
      expect(receiver.received).toHaveLength(SCHEDULE.length);
      // Asked for twenty minutes ago: no gateway is about to start it any more. The sweep does, as its own run.
      await app.orm.em.fork().execute(`update webhook_deliveries set redelivered_at = now() - interval '20 minutes' where id = ?`, [deliveryId]);
      expect((await findUnstartedDeliveries(app.orm.em.fork(), { createdBefore: new Date(), limit: 10_000 })).filter((d) => d.deliveryId === deliveryId)).toEqual([
        { deliveryId, redelivery: { number: 1, attemptsBefore: SCHEDULE.length } },
      ]);
      // A sweep that listed its earlier run marks that run only: this one stays for the next sweep.
      await markDeliveriesSwept(app.orm.em.fork(), [{ deliveryId, run: 0 }]);
      expect((await findUnstartedDeliveries(app.orm.em.fork(), { createdBefore: new Date(), limit: 10_000 })).map((d) => d.deliveryId)).toContain(deliveryId);
      await app.temporal.client.workflow.execute<typeof unstartedDeliveriesWorkflow>('unstartedDeliveriesWorkflow', {
        taskQueue: app.taskQueue,
        workflowId: `test-unstarted-deliveries-${deliveryId}`,
        args: [{ schedule: SCHEDULE, attemptTimeoutMs: TIMEOUT_MS }],
      });
      expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookRedelivery(deliveryId, 1)).result()).toBe('delivered');
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual(Array(SCHEDULE.length + 1).fill(deliveryId));
      expect(await deliveryFromGraphQL(tenant.apiKey, deliveryId)).toMatchObject({ state: 'delivered', attemptCount: SCHEDULE.length + 1, redeliveries: 1 });
    } finally {
      await connection.close().catch(() => undefined);
      await receiver.close();
    }
  });

  it('is sent again at most five times', async () => {
    const { receiver, tenant, deliveryId } = await deliverTo(() => ({ status: 500 }));
    try {
      // As after five redeliveries that failed too.
      await app.orm.em.fork().execute(`update webhook_deliveries set redeliveries = 5 where id = ?`, [deliveryId]);
      const refused = await redeliver(tenant.apiKey, deliveryId);
      expect(refused.errors![0]).toMatchObject({ extensions: { code: 'CONFLICT' }, message: expect.stringContaining('5 times') });
    } finally {
      await receiver.close();
    }
  });
});
