import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawnEntry } from '../scripts/child-process.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { freePort } from './support/free-port.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createPaymentTenant, merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';
import { bearer, createLeadTenant, newSessionId, postLead } from './support/leads.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

/** The order of the product's one payment, once the sandbox has authorized it (its answer still on the way). */
function authorizedOrderOf(target: TestApp, productId: number): Promise<number> {
  return vi.waitFor(
    async () => {
      const [order] = await target.orm.em.fork().execute<{ id: number }[]>(`select id from orders where product_id = ?`, [productId]);
      expect(order, 'the payment order').toBeDefined();
      expect(await authorizationsFor(order!.id)).toBe(1);
      return order!.id;
    },
    { timeout: 30_000, interval: 100 },
  );
}

describe('durability (real worker processes)', () => {
  it('a worker killed between authorization and recording: the payment completes once, one authorization', async () => {
    const tenant = await createPaymentTenant(app);
    // .98: the sandbox authorizes at once but answers only after 2.5 s, leaving time to kill the worker.
    await app.orm.em.fork().execute(`update products set price = '12.98' where id = ?`, [tenant.productId]);
    const first = app.spawnWorkerProcess();

    const submitted = post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4242424242424242'));
    const submitOrderId = await authorizedOrderOf(app, tenant.productId);

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

describe('a worker stalled while it holds the payment (the gateway hosting none)', () => {
  it('answers 503 naming the payment, never a 500, and the same key gets its outcome once the worker runs again', async () => {
    // Its own task queue: the one worker of this test is the only one that can run its payments.
    const own = await startTestApp();
    try {
      const tenant = await createPaymentTenant(own);
      const worker = own.spawnWorkerProcess();
      const body = submitBody('4242424242424242');
      const submit = (key: string) => post(own, `/api/${tenant.productId}`, tenant.apiKey, body, { 'idempotency-key': key });
      // Its worker polls: a first payment goes through it.
      expect((await submit(`first-${randomUUID()}`)).body).toMatchObject({ info: 'Success' });
      worker.kill('SIGSTOP');
      const key = `stalled-${randomUUID()}`;
      try {
        // Temporal gives the update up once the payment's first workflow task has timed out on the stalled worker.
        const stalled = await submit(key);
        expect(stalled.status).toBe(503);
        expect(stalled.body.message).toMatch(/^Payment pay_\d+ is still being processed; retry with the same Idempotency-Key/);
      } finally {
        worker.kill('SIGCONT');
      }
      let retried = await submit(key);
      for (let tries = 0; retried.status !== 200 && tries < 60; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        retried = await submit(key);
      }
      expect(retried.body).toMatchObject({ info: 'Success', chargeSuccess: true });
      expect(await authorizationsFor(retried.body.submitOrderId)).toBe(1);
    } finally {
      await own.close();
    }
  }, 180_000);
});

/** A gateway process (`api/main.ts`, hosting a worker: the default) on this test app's servers and task queue. */
async function spawnGateway(target: TestApp) {
  const port = await freePort();
  const gateway = spawnEntry('api/main.ts', { ...target.workerProcessEnv(), HOST: '127.0.0.1', PORT: String(port), GATEWAY_WORKER: 'on' }, 'ignore');
  const exited = new Promise((resolve) => gateway.once('exit', resolve));
  const baseUrl = `http://127.0.0.1:${port}`;
  await vi.waitFor(async () => expect((await fetch(`${baseUrl}/healthz`)).ok).toBe(true), { timeout: 60_000, interval: 200 });
  const submit = (productId: number, apiKey: string, body: unknown) =>
    fetch(`${baseUrl}/api/${productId}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: apiKey }, body: JSON.stringify(body) });
  const kill = async () => {
    if (gateway.exitCode === null && gateway.signalCode === null) gateway.kill('SIGKILL');
    await exited;
  };
  return { submit, kill };
}

describe('a gateway hosting a worker (GATEWAY_WORKER=on) killed mid-payment', () => {
  let own: TestApp;
  beforeAll(async () => {
    // A task queue of its own: no worker process polls it until the test starts one.
    own = await startTestApp();
  });
  afterAll(() => own?.close());

  it('before its answer: a worker process completes the payment once (one authorization, one transaction)', async () => {
    const tenant = await createPaymentTenant(own);
    // .98: the sandbox authorizes at once but answers only after 2.5 s, leaving time to kill the gateway.
    await own.orm.em.fork().execute(`update products set price = '12.98' where id = ?`, [tenant.productId]);
    const gateway = await spawnGateway(own);
    try {
      // Only the gateway's worker polls: the payment's first (eager) workflow task runs in the gateway.
      const submitted = gateway.submit(tenant.productId, tenant.apiKey, submitBody('4242424242424242')).catch((error: unknown) => error);
      const submitOrderId = await authorizedOrderOf(own, tenant.productId);
      await gateway.kill();
      expect(await submitted, 'the caller lost its connection with the gateway').toBeInstanceOf(Error);
      own.spawnWorkerProcess();

      // The workflow task the gateway held times out; the worker process runs the payment again from its start.
      const handle = own.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, submitOrderId));
      expect(await handle.result()).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, submitOrderId });
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.some((event) => event.workflowTaskTimedOutEventAttributes), "the killed gateway's task timed out").toBe(true);
      expect(await authorizationsFor(submitOrderId)).toBe(1);
      const rows = await own.orm.em.fork().execute(`select success, status_id from transactions where order_id = ?`, [submitOrderId]);
      expect(rows).toEqual([{ success: true, status_id: 2636 }]);
    } finally {
      await gateway.kill();
    }
  }, 90_000);

  it('during a cascade\'s second attempt: the payment run again keeps each attempt on its own account', async () => {
    const tenant = await createPaymentTenant(own);
    // .98: each attempt's first answer comes after 2.5 s. This card is declined (cascadable) on the first account.
    await own.orm.em.fork().execute(`update products set price = '12.98' where id = ?`, [tenant.productId]);
    const gateway = await spawnGateway(own);
    let submitOrderId: number;
    try {
      const submitted = gateway.submit(tenant.productId, tenant.apiKey, submitBody('4000000000000341', { cascade: true })).catch((error: unknown) => error);
      // Both attempts reached the sandbox: the second one's answer is on its way when the gateway dies.
      submitOrderId = await vi.waitFor(
        async () => {
          const [order] = await own.orm.em.fork().execute<{ id: number }[]>(`select id from orders where product_id = ?`, [tenant.productId]);
          expect(order, 'the payment order').toBeDefined();
          expect(await authorizationsFor(order!.id)).toBe(2);
          return order!.id;
        },
        { timeout: 30_000, interval: 100 },
      );
      await gateway.kill();
      expect(await submitted).toBeInstanceOf(Error);
    } finally {
      await gateway.kill();
    }
    own.spawnWorkerProcess();

    const result = await own.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, submitOrderId)).result();
    expect(result).toMatchObject({ info: 'Success', chargeSuccess: true, mid: tenant.mids[1] });
    expect(await authorizationsFor(submitOrderId)).toBe(2);
    const rows = await own.orm.em
      .fork()
      .execute<{ attempt_number: number; mid: string; success: boolean }[]>(`select attempt_number, mid, success from transactions where order_id = ? order by attempt_number`, [submitOrderId]);
    expect(rows).toEqual([
      { attempt_number: 1, mid: tenant.mids[0], success: false },
      { attempt_number: 2, mid: tenant.mids[1], success: true },
    ]);
  }, 90_000);

  it('after its answer, before Temporal stored the task: the payment run again ends as it answered, on the same merchant account', async () => {
    // Two accounts; once the first has approved volume, a fresh selection would prefer the second.
    const tenant = await createLeadTenant(own, {
      extra: {
        products: [oneOffProduct('ebook', '19.99')],
        merchantAccounts: [merchantAccount(`AFTER-A-${randomUUID().slice(0, 8)}`, { monthlyCap: 1_000_000 }), merchantAccount(`AFTER-B-${randomUUID().slice(0, 8)}`, { monthlyCap: 999_999 })],
      },
    });
    const productId = tenant.result.products[0]!.id;
    const sessionId = newSessionId();
    expect((await postLead(own.baseUrl, { email: 'after@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey))).status).toBe(201);
    // Holding the lead's row: the first step leaves the marking to a step after the answer (it never waits for a
    // lead before answering), which waits for the row and keeps the answered workflow task open.
    const locker = own.orm.em.fork();
    await locker.begin();
    try {
      expect(await locker.execute(`select id from customer_leads where tenant_id = ? and session_id = ? for update`, [tenant.id, sessionId])).toHaveLength(1);
      const gateway = await spawnGateway(own);
      let answer: Record<string, any>;
      try {
        const response = await gateway.submit(productId, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
        answer = (await response.json()) as Record<string, any>;
        expect(answer).toMatchObject({ info: 'Success', chargeSuccess: true });
      } finally {
        await gateway.kill();
      }
      own.spawnWorkerProcess();
      await locker.rollback();

      const handle = own.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, answer.submitOrderId));
      expect(await handle.result(), 'the result of the payment run again').toEqual(answer);
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.some((event) => event.workflowTaskTimedOutEventAttributes), "the killed gateway's task timed out").toBe(true);
      expect(await authorizationsFor(answer.submitOrderId)).toBe(1);
      const rows = await own.orm.em.fork().execute(`select success, merchant_account_id from transactions where order_id = ?`, [answer.submitOrderId]);
      expect(rows).toEqual([{ success: true, merchant_account_id: answer.merchantAccountId }]);
    } finally {
      if (locker.isInTransaction()) await locker.rollback();
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
