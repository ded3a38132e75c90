import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawnEntry } from '../scripts/child-process.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { freePort } from './support/free-port.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createPaymentTenant, post, submitBody } from './support/payments.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe('durability (real worker processes)', () => {
  it('a worker killed between authorization and recording: the payment completes once, one authorization', async () => {
    const tenant = await createPaymentTenant(app);
    // .98: the sandbox authorizes at once but answers only after 2.5 s, leaving time to kill the worker.
    await app.orm.em.fork().execute(`update products set price = '12.98' where id = ?`, [tenant.productId]);
    const first = app.spawnWorkerProcess();

    const submitted = post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4242424242424242'));
    // Wait until the sandbox has authorized the payment (its answer is still on the way).
    const submitOrderId = await vi.waitFor(
      async () => {
        const [order] = await app.orm.em.fork().execute<{ id: number }[]>(`select id from orders where product_id = ?`, [tenant.productId]);
        expect(order, 'the payment order').toBeDefined();
        expect(await authorizationsFor(order!.id)).toBe(1);
        return order!.id;
      },
      { timeout: 30_000, interval: 100 },
    );

    first.kill('SIGKILL');
    const [before] = await app.orm.em.fork().execute(`select count(*)::int as n from transactions where order_id = ?`, [submitOrderId]);
    expect(before).toEqual({ n: 0 });
    app.spawnWorkerProcess();

    const { status, body: result } = await submitted;
    expect(status).toBe(200);
    expect(result).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, submitOrderId });
    expect(await authorizationsFor(submitOrderId)).toBe(1);
    const rows = await app.orm.em.fork().execute(`select success, status_id from transactions where order_id = ?`, [submitOrderId]);
    expect(rows).toEqual([{ success: true, status_id: 2636 }]);
  });
});

describe('a gateway hosting a worker (GATEWAY_WORKER=on) killed mid-payment', () => {
  it('leaves the payment to a worker process, which completes it once: one authorization, one transaction', async () => {
    const tenant = await createPaymentTenant(app);
    // .98: the sandbox authorizes at once but answers only after 2.5 s, leaving time to kill the gateway.
    await app.orm.em.fork().execute(`update products set price = '12.98' where id = ?`, [tenant.productId]);
    const port = await freePort();
    const gateway = spawnEntry('api/main.ts', { ...app.workerProcessEnv(), HOST: '127.0.0.1', PORT: String(port), GATEWAY_WORKER: 'on' }, 'pipe');
    const exited = new Promise((resolve) => gateway.once('exit', resolve));
    try {
      await vi.waitFor(async () => expect((await fetch(`http://127.0.0.1:${port}/healthz`)).ok).toBe(true), { timeout: 60_000, interval: 200 });
      // Only the gateway's worker polls now, so the payment's first (eager) workflow task runs in the gateway.
      const submitted = fetch(`http://127.0.0.1:${port}/api/${tenant.productId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: tenant.apiKey },
        body: JSON.stringify(submitBody('4242424242424242')),
      }).catch((error: unknown) => error);
      const submitOrderId = await vi.waitFor(
        async () => {
          const [order] = await app.orm.em.fork().execute<{ id: number }[]>(`select id from orders where product_id = ?`, [tenant.productId]);
          expect(order, 'the payment order').toBeDefined();
          expect(await authorizationsFor(order!.id)).toBe(1);
          return order!.id;
        },
        { timeout: 30_000, interval: 100 },
      );
      gateway.kill('SIGKILL');
      await exited;
      expect(await submitted, 'the caller lost its connection with the gateway').toBeInstanceOf(Error);
      app.spawnWorkerProcess();

      // The workflow task the gateway held times out; the worker process runs the payment again from its start.
      const handle = app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, submitOrderId));
      const result = await handle.result();
      expect(result).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, submitOrderId });
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.some((event) => event.workflowTaskTimedOutEventAttributes), 'the killed gateway\'s task timed out').toBe(true);
      expect(await authorizationsFor(submitOrderId)).toBe(1);
      const rows = await app.orm.em.fork().execute(`select success, status_id from transactions where order_id = ?`, [submitOrderId]);
      expect(rows).toEqual([{ success: true, status_id: 2636 }]);
    } finally {
      if (gateway.exitCode === null && gateway.signalCode === null) gateway.kill('SIGKILL');
    }
  }, 90_000);
});

describe('no worker', () => {
  it('answers 503 instead of hanging, and the payment completes once a worker is back', async () => {
    const quick = await startTestApp({ SUBMIT_ANSWER_TIMEOUT_MS: '2000' });
    try {
      const tenant = await createPaymentTenant(quick);
      const body = submitBody('4242424242424242');
      const key = { 'idempotency-key': `no-worker-${randomUUID()}` };
      const first = await post(quick, `/api/${tenant.productId}`, tenant.apiKey, body, key);
      expect(first.status).toBe(503);
      expect(first.body).toEqual({ success: false, message: expect.stringContaining('Idempotency-Key') });
      await quick.startWorker();
      // A client retries with the same key until the payment answers.
      const retry = await vi.waitFor(
        async () => {
          const answer = await post(quick, `/api/${tenant.productId}`, tenant.apiKey, body, key);
          expect(answer.status).toBe(200);
          return answer;
        },
        { timeout: 30_000, interval: 100 },
      );
      expect(retry.body).toMatchObject({ info: 'Success' });
      expect(await authorizationsFor(retry.body.submitOrderId)).toBe(1);
    } finally {
      await quick.close();
    }
  });
});
