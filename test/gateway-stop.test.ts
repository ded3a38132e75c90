import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { spawnEntry } from '../scripts/child-process.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { freePort } from './support/free-port.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { bearer, createEbookShop, newSessionId, postLead } from './support/leads.ts';
import { createPaymentTenant, post, submitBody } from './support/payments.ts';
import { startTcpCut } from './support/tcp-cut.ts';

/**
 * The gateway process (`api/main.ts`) as production runs it (NODE_ENV unset), stopped by a supervisor's SIGTERM.
 * The in-process test app only provisions tenants; its encryption key is the spawned gateway's.
 */
let app: TestApp;
const gateways: ChildProcess[] = [];

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  for (const gateway of gateways) if (gateway.exitCode === null && gateway.signalCode === null) gateway.kill('SIGKILL');
  await app?.close();
});

interface SpawnedGateway {
  readonly baseUrl: string;
  readonly output: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): void;
}

/** A gateway process on a task queue no worker polls: a submit waits there until SUBMIT_ANSWER_TIMEOUT_MS. */
async function spawnGateway(env: Record<string, string> = {}): Promise<SpawnedGateway> {
  const port = await freePort();
  const { NODE_ENV, ...inherited } = process.env;
  const gateway = spawnEntry(
    'api/main.ts',
    {
      ...inherited,
      DATABASE_URL: app.config.databaseUrl,
      TEMPORAL_ADDRESS: app.config.temporalAddress,
      TEMPORAL_TASK_QUEUE: `gateway-stop-${randomUUID()}`,
      DATA_ENCRYPTION_KEY: app.config.dataEncryptionKey!.toString('base64'),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
    'pipe',
  );
  gateways.push(gateway);
  let output = '';
  gateway.stdout!.on('data', (chunk) => (output += chunk));
  gateway.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    gateway.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilHealthy(`${baseUrl}/healthz`, exited);
  return { baseUrl, output: () => output, exited, stop: () => gateway.kill('SIGTERM') };
}

/** How the process ended, or that it had not within `ms` (well inside the gateway's own cut-off). */
const endOf = (gateway: SpawnedGateway, ms: number) =>
  Promise.race([gateway.exited, new Promise((resolve) => setTimeout(() => resolve(`still running after ${ms} ms`), ms))]);

it('ends by itself on SIGTERM, after answering GraphQL and REST, with a keep-alive connection left open', async () => {
  // Apollo Server's own signal handlers (outside NODE_ENV=test) once raced this stop and held app.close() for ever.
  const gateway = await spawnGateway();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    expect(await get(agent, `${gateway.baseUrl}/healthz`)).toBe(200);
    const graphql = await fetch(`${gateway.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(graphql.status).toBeLessThan(500);

    gateway.stop();
    expect({ end: await endOf(gateway, 20_000), output: gateway.output() }).toEqual({ end: { code: 0, signal: null }, output: expect.any(String) });
  } finally {
    agent.destroy();
  }
}, 90_000);

it('lets the submit of a client that hung up finish before it closes the database and Temporal', async () => {
  const tenant = await createPaymentTenant(app);
  // No worker at all (the gateway hosts none): the submit waits for an answer nobody gives; its client hangs up,
  // which frees the connection at once.
  const gateway = await spawnGateway({ SUBMIT_ANSWER_TIMEOUT_MS: '3000', LOG_LEVEL: 'info', GATEWAY_WORKER: 'off' });
  const submit = http.request(`${gateway.baseUrl}/api/${tenant.productId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: tenant.apiKey },
  });
  submit.on('error', () => {});
  const pan = '4111111111111111';
  submit.end(JSON.stringify(submitBody(pan)));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  submit.destroy();

  gateway.stop();
  expect(await endOf(gateway, 30_000)).toEqual({ code: 0, signal: null });
  // The handler ended with its own answer (503: still processing, retry), not cut off or failing on a closed pool.
  const hungUp = gateway
    .output()
    .split('\n')
    .filter((line) => line.includes('the client hung up'))
    .map((line) => JSON.parse(line) as { statusCode: number });
  expect(hungUp).toEqual([expect.objectContaining({ statusCode: 503 })]);
  expect(gateway.output()).not.toMatch(/unexpected error|destroyed/i);
  // Its log lines, request lines included (LOG_LEVEL=info), carry no card number.
  expect(gateway.output()).not.toContain(pan);
}, 90_000);

it("starts a lead's customer_lead.paid still on its way to Temporal before it closes its connection", async () => {
  // The session paid before its lead is written (the test app's own worker runs the payment).
  await app.startWorker();
  const { shop, productId } = await createEbookShop(app, 'STOP');
  const sessionId = newSessionId();
  const paid = await post(app, `/api/${productId}`, shop.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
  expect(paid.body.info).toBe('Success');
  await app.temporal.client.workflow.getHandle(workflowIds.payment(shop.id, paid.body.submitOrderId)).result();

  // The gateway reaches Temporal through a link that hangs: the lead's write is answered, its webhook's start waits.
  const link = await startTcpCut(app.config.temporalAddress!);
  onTestFinished(() => link.close());
  const gateway = await spawnGateway({ TEMPORAL_ADDRESS: link.address, GATEWAY_WORKER: 'off', TEMPORAL_CALL_TIMEOUT_MS: '20000' });
  link.freeze();
  const written = await postLead(gateway.baseUrl, { email: 'stopping@example.com', session_id: sessionId }, bearer(shop.keys.test.secretKey));
  expect(written).toMatchObject({ status: 201, body: { data: { status: 'paid' } } });

  gateway.stop();
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await link.restore();
  expect(await endOf(gateway, 30_000)).toEqual({ code: 0, signal: null });
  expect(gateway.output()).not.toContain('delivery not started');
  // Started before the stop closed Temporal (the test's queue has no worker: it is left running, then ended here).
  const [delivery] = await app.orm.em.fork().execute<{ id: string }[]>(`select id from webhook_deliveries where tenant_id = ? and event_type = 'customer_lead.paid'`, [shop.id]);
  const started = app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(delivery!.id));
  expect((await started.describe()).status.name).toBe('RUNNING');
  await started.terminate('test over');
}, 90_000);

function get(agent: http.Agent, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

async function waitUntilHealthy(url: string, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !gone) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the gateway did not become healthy at ${url}`);
}
