import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopChild } from '../scripts/local-stack/temporal-dev-server.ts';
import { spawnEntry } from '../scripts/child-process.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createPaymentTenant, post, submitBody } from './support/payments.ts';

let app: TestApp;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  for (const worker of workers) await stopChild(worker, 1_000);
  await app?.close();
});

function startWorkerProcess(): ChildProcess {
  const worker = spawnEntry('worker/main.ts', app.workerProcessEnv(), 'pipe');
  workers.push(worker);
  return worker;
}

async function until(check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not met in time');
}

describe('durability (real worker processes)', () => {
  it('a worker killed between authorization and recording: the payment completes once, one authorization', async () => {
    const tenant = await createPaymentTenant(app);
    // .98: the sandbox authorizes at once but answers only after 2.5 s, leaving time to kill the worker.
    await app.orm.em.fork().execute(`update products set price = '12.98' where id = ?`, [tenant.productId]);
    const first = startWorkerProcess();

    const submitted = post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4242424242424242'));
    let submitOrderId = 0;
    await until(async () => {
      const [order] = await app.orm.em.fork().execute<{ id: number }[]>(`select id from orders where product_id = ?`, [tenant.productId]);
      submitOrderId = order?.id ?? 0;
      return submitOrderId > 0 && (await authorizationsFor(submitOrderId)) === 1;
    }, 30_000);

    first.kill('SIGKILL');
    const [before] = await app.orm.em.fork().execute(`select count(*)::int as n from transactions where order_id = ?`, [submitOrderId]);
    expect(before).toEqual({ n: 0 });
    startWorkerProcess();

    const { status, body: result } = await submitted;
    expect(status).toBe(200);
    expect(result).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, submitOrderId });
    expect(await authorizationsFor(submitOrderId)).toBe(1);
    const rows = await app.orm.em.fork().execute(`select success, status_id from transactions where order_id = ?`, [submitOrderId]);
    expect(rows).toEqual([{ success: true, status_id: 2636 }]);
  });
});

describe('no worker', () => {
  it('answers 503 instead of hanging, and the payment completes once a worker is back', async () => {
    const quick = await startTestApp({ SUBMIT_ANSWER_TIMEOUT_MS: '2000' });
    try {
      const tenant = await createPaymentTenant(quick);
      const body = submitBody('4242424242424242');
      const key = { 'idempotency-key': `no-worker-${Date.now()}` };
      const first = await post(quick, `/api/${tenant.productId}`, tenant.apiKey, body, key);
      expect(first.status).toBe(503);
      expect(first.body).toEqual({ success: false, message: expect.stringContaining('Idempotency-Key') });
      await quick.startWorker();
      // A client retries with backoff until the payment answers.
      let retry = await post(quick, `/api/${tenant.productId}`, tenant.apiKey, body, key);
      for (let i = 0; i < 10 && retry.status === 503; i++) retry = await post(quick, `/api/${tenant.productId}`, tenant.apiKey, body, key);
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ info: 'Success' });
      expect(await authorizationsFor(retry.body.submitOrderId)).toBe(1);
    } finally {
      await quick.close();
    }
  });
});
