import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { dispatchWebhookEvent } from '../services/webhooks/dispatch.ts';
import { temporalDeliveryStarter } from '../adapters/temporal/webhook-delivery-starter.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant } from './support/tenants.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.ts';
import { createEmailTenant, newRecipient, postEmail, readEmail, settledEmail } from './support/smtp-email.ts';

/**
 * A worker killed in the middle of an outside call: Temporal learns of it from the missing heartbeats and gives the
 * call to another worker within the heartbeat timeout (20 s), not when the activity's three-minute limit ends.
 */
let app: TestApp;
let sink: SmtpSink;

beforeAll(async () => {
  sink = await startSmtpSink();
  // E-mail statuses are polled through the API: a rate limit far above the file's traffic.
  app = await startTestApp({ SMTP_URL: sink.url, RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(async () => {
  await app?.close();
  await sink?.close();
});

it('a webhook POST whose worker was killed mid-call is sent again by another worker well before its 3-minute limit', async () => {
  const secret = generateWebhookSecret();
  // The first POST is never answered: the worker making it dies while it waits. The next one is accepted.
  const receiver = await startWebhookReceiver(secret, (attempt) => (attempt === 1 ? 'hang' : { status: 204 }));
  let second: ReturnType<TestApp['spawnWorkerProcess']> | undefined;
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

    second = app.spawnWorkerProcess();
    const handle = app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveryId!));
    // Heartbeats stop with the process; after 20 s without one the attempt is given to the new worker.
    await vi.waitFor(() => expect(receiver.received).toHaveLength(2), { timeout: 75_000, interval: 200 });
    expect(await handle.result()).toBe('delivered');
    // The same event both times, as a receiver deduplicating on webhook-id expects.
    expect(receiver.received.map((request) => request.headers['webhook-id'])).toEqual([deliveryId, deliveryId]);
    expect(receiver.received[1]!.verified).toBe(true);
  } finally {
    // The next test kills the one worker that takes its e-mail: none of this one's may be left to take it.
    second?.kill('SIGKILL');
    await receiver.close();
  }
}, 150_000);

it('a batch whose worker was killed in the middle: what the server took is not sent again, the rest is sent by another worker, once', async () => {
  const tenant = await createEmailTenant(app);
  const recipients = [newRecipient('a'), newRecipient('b'), newRecipient('c'), newRecipient('d'), newRecipient('stuck')];
  const stuck = recipients.at(-1)!;
  // The server takes the last message and never answers it: the worker sending it dies while it waits.
  sink.script(stuck, ['hang']);
  const first = app.spawnWorkerProcess();
  const queued = await postEmail(app, '/api/email/batch', {
    tenant_key: tenant.tenantKey,
    emails: recipients.map((to, index) => ({ from: `Shop <orders@${tenant.domain}>`, to, subject: `Receipt ${index}`, templateType: 'string', templateContent: '<p>Paid {{amount}}</p>', data: { amount: '29.99' } })),
  });
  expect(queued.status).toBe(200);
  const ids: string[] = queued.body.data.responses.map((response: { id: string }) => response.id);
  await vi.waitFor(() => expect(sink.attempts(stuck)).toBe(1), { timeout: 60_000, interval: 100 });
  // Each e-mail the server took is recorded sent at once, not when the whole batch is done (the stuck one would
  // hold that back for its 30 s socket timeout, and a worker lost meanwhile would leave all of them to send again).
  const taken = await Promise.all(ids.slice(0, -1).map((id) => settledEmail(app, tenant.apiKey, id, 10_000)));
  expect(taken.map((email) => email.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
  // Still waiting for the server when the worker dies (not yet given up on after the socket's 30 s).
  expect((await readEmail(app, tenant.apiKey, ids.at(-1)!)).status).toBe('queued');
  expect(sink.receivedBy(stuck)).toEqual([]);
  first.kill('SIGKILL');

  const second = app.spawnWorkerProcess();
  try {
    // The SMTP attempt's limit is 5 minutes; 20 s without heartbeats hands it to the new worker.
    const [message] = await sink.waitFor(stuck, 1, 75_000);
    const email = await settledEmail(app, tenant.apiKey, ids.at(-1)!, 30_000);
    expect(email).toMatchObject({ status: 'sent', smtpMessageId: message!.mail.messageId });
    expect(message!.mail.html).toContain('Paid 29.99');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(recipients.map((to) => sink.receivedBy(to).length)).toEqual([1, 1, 1, 1, 1]);
  } finally {
    // The next test kills the one worker that takes its e-mails.
    second.kill('SIGKILL');
  }
}, 150_000);

it('an e-mail some recipients took and one deferred, its worker killed before the attempt ended: sent to the deferred one only', async () => {
  const tenant = await createEmailTenant(app);
  const [took, alsoTook, deferred, stuck] = [newRecipient('took'), newRecipient('also-took'), newRecipient('deferred'), newRecipient('stuck')];
  // One recipient's server asks to try later (451 at RCPT TO); the message goes to the other two.
  sink.scriptRcpt(deferred, [451]);
  // A second e-mail of the batch is never answered: the attempt cannot end, so its result never reaches the workflow.
  sink.script(stuck, ['hang']);
  const first = app.spawnWorkerProcess();
  const from = `Shop <orders@${tenant.domain}>`;
  const queued = await postEmail(app, '/api/email/batch', {
    tenant_key: tenant.tenantKey,
    emails: [
      { from, to: [took, alsoTook, deferred], subject: 'Your receipt', templateType: 'string', templateContent: '<p>Paid {{amount}}</p>', data: { amount: '29.99' } },
      { from, to: stuck, subject: 'Another receipt', templateType: 'string', templateContent: '<p>Paid {{amount}}</p>', data: { amount: '5.00' } },
    ],
  });
  expect(queued.status).toBe(200);
  const [partlyTaken, hanging] = queued.body.data.responses.map((response: { id: string }) => response.id);
  await vi.waitFor(() => expect(sink.attempts(stuck)).toBe(1), { timeout: 60_000, interval: 100 });
  // The deferral is written as the server answered: still queued, one attempt, the deferred recipient named.
  await vi.waitFor(
    async () => expect(await readEmail(app, tenant.apiKey, partlyTaken)).toMatchObject({ status: 'queued', attemptCount: 1, failureReason: expect.stringContaining(deferred) }),
    { timeout: 10_000, interval: 100 },
  );
  expect([took, alsoTook, deferred].map((to) => sink.receivedBy(to).length)).toEqual([1, 1, 0]);
  first.kill('SIGKILL');

  const second = app.spawnWorkerProcess();
  try {
    // The attempt is given to the new worker after 20 s without heartbeats; it runs with the workflow's old input
    // (every recipient of every e-mail), and the e-mail's row says who is left.
    await sink.waitFor(deferred, 1, 75_000);
    const email = await settledEmail(app, tenant.apiKey, partlyTaken, 30_000);
    expect(email).toMatchObject({ status: 'sent', attemptCount: 2 });
    expect((await settledEmail(app, tenant.apiKey, hanging, 30_000)).status).toBe('sent');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([took, alsoTook, deferred].map((to) => sink.receivedBy(to).length)).toEqual([1, 1, 1]);
    expect(sink.rcptAttempts(took)).toBe(1);
    // The same message both times, as the recipients' servers see it.
    expect(sink.receivedBy(deferred)[0]!.mail.messageId).toBe(sink.receivedBy(took)[0]!.mail.messageId);
  } finally {
    second.kill('SIGKILL');
  }
}, 150_000);
