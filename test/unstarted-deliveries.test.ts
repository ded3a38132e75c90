import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { findUnstartedDeliveries } from '../data/queries/webhook-deliveries.ts';
import { recordWebhookDeliveries } from '../services/webhooks/dispatch.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import type { unstartedDeliveriesWorkflow } from '../workflows/maintenance/unstarted-deliveries.workflow.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant, type TestTenant } from './support/tenants.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';

/**
 * A gateway records some events itself (a lead written after its payment, a subscription cancelled with no billing
 * workflow) and then starts their deliveries; one that could not reach Temporal, or stopped between the two, left
 * them pending, never sent. The unstarted-deliveries sweep (every five minutes by its schedule) starts them.
 */
let app: TestApp;
let tenant: TestTenant;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
  const secret = generateWebhookSecret();
  receiver = await startWebhookReceiver(secret, () => ({ status: 200 }));
  tenant = await createTestTenant(app);
  await provision(
    { em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor: 'test' },
    parseFixture({ tenants: [{ slug: tenant.result.slug, name: 'Swept', clientId: tenant.clientId, webhookEndpoints: [{ slug: 'hooks', url: receiver.url, secret }] }] }),
  );
});
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

/** An event recorded as a gateway records one, its delivery never started. */
async function recordedNotStarted(): Promise<string> {
  const [delivery] = await recordWebhookDeliveries(app.orm.em.fork(), {
    tenantId: tenant.id,
    event: { type: 'webhook.test', timestamp: new Date().toISOString(), data: { note: randomUUID() } },
    eventKey: `swept/${randomUUID()}`,
  });
  return delivery!.deliveryId;
}

const sweep = () =>
  app.temporal.client.workflow.execute<typeof unstartedDeliveriesWorkflow>('unstartedDeliveriesWorkflow', {
    taskQueue: app.taskQueue,
    workflowId: `test-unstarted-deliveries-${randomUUID()}`,
    args: [{ schedule: [0], attemptTimeoutMs: 5_000 }],
  });
const deliveredIds = () => receiver.received.map((r) => r.headers['webhook-id']);
const stateOf = async (id: string) => (await app.orm.em.fork().execute<{ state: string }[]>(`select state from webhook_deliveries where id = ?`, [id]))[0]!.state;

it('sends a delivery recorded long ago and never started, once however many sweeps run, and leaves a young one to its gateway', async () => {
  const stalled = await recordedNotStarted();
  const young = await recordedNotStarted();
  // Recorded twenty minutes ago: no gateway is still about to start it.
  await app.orm.em.fork().execute(`update webhook_deliveries set created_at = now() - interval '20 minutes' where id = ?`, [stalled]);

  // Sweeps at once (the schedule's own and an operator's, say): the delivery starts once and is sent once.
  await Promise.all([sweep(), sweep(), sweep()]);
  await vi.waitFor(async () => expect(await stateOf(stalled)).toBe('delivered'), { timeout: 15_000, interval: 100 });
  await sweep();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(deliveredIds().filter((id) => id === stalled)).toHaveLength(1);
  expect(receiver.received.every((r) => r.verified)).toBe(true);
  expect(await stateOf(young)).toBe('pending');
  expect(deliveredIds()).not.toContain(young);
});

it('sweeps a delivery once: one whose workflow closed without attempting it is not listed again ahead of newer ones', async () => {
  const stuck = await recordedNotStarted();
  await app.orm.em.fork().execute(`update webhook_deliveries set created_at = now() - interval '30 minutes' where id = ?`, [stuck]);
  await sweep();
  await vi.waitFor(async () => expect(await stateOf(stuck)).toBe('delivered'), { timeout: 15_000, interval: 100 });
  // As a delivery whose workflow ended without an attempt is left: pending, never attempted, its workflow closed.
  await app.orm.em.fork().execute(`update webhook_deliveries set state = 'pending', attempt_count = 0 where id = ?`, [stuck]);
  const newer = await recordedNotStarted();
  await app.orm.em.fork().execute(`update webhook_deliveries set created_at = now() - interval '20 minutes' where id = ?`, [newer]);
  await sweep();
  await vi.waitFor(async () => expect(await stateOf(newer)).toBe('delivered'), { timeout: 15_000, interval: 100 });
  const [{ swept }] = (await app.orm.em.fork().execute<{ swept: boolean }[]>(`select swept_at is not null as swept from webhook_deliveries where id = ?`, [stuck])) as [{ swept: boolean }];
  expect(swept).toBe(true);
  const listed = await findUnstartedDeliveries(app.orm.em.fork(), { createdBefore: new Date(), limit: 10_000 });
  expect(listed.map((d) => d.deliveryId)).not.toContain(stuck);
});
