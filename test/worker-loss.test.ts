import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { dispatchWebhookEvent } from '../services/webhooks/dispatch.ts';
import { temporalDeliveryStarter } from '../adapters/temporal/webhook-delivery-starter.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant } from './support/tenants.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';

/**
 * A worker killed in the middle of an outside call: Temporal learns of it from the missing heartbeats and gives the
 * call to another worker within the heartbeat timeout (20 s), not when the activity's three-minute limit ends.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

it('a webhook POST whose worker was killed mid-call is sent again by another worker well before its 3-minute limit', async () => {
  const secret = generateWebhookSecret();
  // The first POST is never answered: the worker making it dies while it waits. The next one is accepted.
  const receiver = await startWebhookReceiver(secret, (attempt) => (attempt === 1 ? 'hang' : { status: 204 }));
  try {
    const tenant = await createTestTenant(app, { webhookEndpoints: [{ slug: 'main', url: receiver.url, secret }] });
    // One scheduled attempt with a minute to answer: only the worker's loss can bring a second POST within the test.
    const starter = temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: [0], attemptTimeoutMs: 60_000 });
    const first = app.spawnWorkerProcess();
    const [deliveryId] = await dispatchWebhookEvent(
      { em: app.orm.em.fork(), starter, logger: app.logger },
      { tenantId: tenant.id, event: { type: 'customer_lead.paid', timestamp: new Date().toISOString(), data: { leadId: 'lead-1', amount: '29.99' } } },
    );
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 60_000, interval: 100 });
    first.kill('SIGKILL');

    app.spawnWorkerProcess();
    const handle = app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId!));
    // Heartbeats stop with the process; after 20 s without one the attempt is given to the new worker.
    await vi.waitFor(() => expect(receiver.received).toHaveLength(2), { timeout: 75_000, interval: 200 });
    expect(await handle.result()).toBe('delivered');
    // The same event both times, as a receiver deduplicating on webhook-id expects.
    expect(receiver.received.map((request) => request.headers['webhook-id'])).toEqual([deliveryId, deliveryId]);
    expect(receiver.received[1]!.verified).toBe(true);
  } finally {
    await receiver.close();
  }
}, 150_000);
