import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { temporal } from '@temporalio/proto';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createPaymentTenant, localActivitiesOf, post, submitBody, type PaymentTenant } from './support/payments.ts';
import { call, createPaymentsApiTenant, paymentBody } from './support/payments-api.ts';
import { backendPidOf, waitForLockWaiters } from './support/lock-waiters.ts';

/**
 * A gateway that hosts a worker (GATEWAY_WORKER=on, the product's default) starts payments eagerly and takes
 * their answer in process, with no `submit` update; the update stays the way to an answer the process did not get.
 * These apps run no other worker: every workflow task of these payments runs in the gateway's own worker.
 */
let app: TestApp;
let tenant: PaymentTenant;

beforeAll(async () => {
  app = await startTestApp({}, { hostWorker: true });
  tenant = await createPaymentTenant(app);
});
afterAll(() => app?.close());

const CHALLENGE_CARD = '4000000000003220';

async function historyOf(target: TestApp, tenantId: number, submitOrderId: number): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  const history = await target.temporal.client.workflow.getHandle(workflowIds.payment(tenantId, submitOrderId)).fetchHistory();
  return history.events ?? [];
}
const submitUpdatesIn = (events: temporal.api.history.v1.IHistoryEvent[]) =>
  events.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'submit').length;

describe('a gateway hosting a worker answers eagerly started payments in process', () => {
  it('approved and declined: the answer of the workflow, given without a submit update', async () => {
    const approved = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4242424242424242'));
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636 });
    const declined = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4000000000000002'));
    expect(declined.body).toMatchObject({ info: 'Error', error: 'Declined', chargeSuccess: false, statusId: 3617 });

    for (const answer of [approved.body, declined.body]) {
      // What the caller got is what the workflow ended with: nothing was answered that the payment did not record.
      const result = await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, answer.submitOrderId)).result();
      expect(result).toEqual(answer);
      expect(submitUpdatesIn(await historyOf(app, tenant.id, answer.submitOrderId))).toBe(0);
      expect(await authorizationsFor(answer.submitOrderId)).toBe(1);
      // One step (order, account, authorization, settlement, the webhook recorded), nothing after the answer.
      expect(await localActivitiesOf(app, tenant.id, answer.submitOrderId)).toEqual(['tryFirstAttempt']);
    }
  });

  it('3-D Secure: Pending in process, then the completion reaches the running payment as before', async () => {
    const body = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body);
    expect(pending.body).toMatchObject({ info: 'Pending' });
    const redirect = await fetch(`${app.baseUrl}/3ds/${pending.body.threeDSecureId}`, { redirect: 'manual' });
    await fetch(redirect.headers.get('location')!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'outcome=authenticate' });
    const done = await post(app, `/api/${tenant.productId}/3ds`, tenant.apiKey, { threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ info: 'Success', chargeSuccess: true, submitOrderId: pending.body.submitOrderId });
    expect(submitUpdatesIn(await historyOf(app, tenant.id, pending.body.submitOrderId))).toBe(0);
  });

  it('a held authorization (capture: false): its answer waits on an ordinary activity, so it comes through the submit update', async () => {
    const merchant = await createPaymentsApiTenant(app);
    const held = await call(app, 'POST', '/payments', merchant.apiKey, paymentBody('4242424242424242', { capture: false }));
    expect(held.body).toMatchObject({ status: 'requires_capture' });
    expect(submitUpdatesIn(await historyOf(app, merchant.id, Number(held.body.id.slice(4))))).toBe(1);
    const captured = await call(app, 'POST', `/payments/${held.body.id}/capture`, merchant.apiKey);
    expect(captured.body).toMatchObject({ id: held.body.id, status: 'succeeded' });
  });

  it('concurrent submits each get their own answer', async () => {
    const bodies = Array.from({ length: 12 }, (_, index) => submitBody(index % 3 === 0 ? '4000000000000002' : '4242424242424242'));
    const answers = await Promise.all(bodies.map((body) => post(app, `/api/${tenant.productId}`, tenant.apiKey, body)));
    answers.forEach(({ status, body }, index) => {
      expect(status).toBe(200);
      expect(body).toMatchObject({ email: bodies[index]!.email, info: index % 3 === 0 ? 'Error' : 'Success' });
    });
    expect(new Set(answers.map(({ body }) => body.submitOrderId)).size).toBe(bodies.length);
  });
});

describe('an answer the process does not get in time', () => {
  let late: TestApp;
  let lateTenant: PaymentTenant;
  beforeAll(async () => {
    // No wait at all for the in-process answer: every submit goes on to ask the running (or finished) payment.
    late = await startTestApp({}, { hostWorker: { localAnswerWaitMs: 0 } });
    lateTenant = await createPaymentTenant(late);
  });
  afterAll(() => late?.close());

  it('is asked of the payment itself: the same answer, one authorization', async () => {
    const answers = await Promise.all(['4242424242424242', '4000000000000002'].map((pan) => post(late, `/api/${lateTenant.productId}`, lateTenant.apiKey, submitBody(pan))));
    expect(answers.map(({ status }) => status)).toEqual([200, 200]);
    expect(answers.map(({ body }) => [body.info, body.statusId])).toEqual([
      ['Success', 2636],
      ['Error', 3617],
    ]);
    for (const { body } of answers) {
      const result = await late.temporal.client.workflow.getHandle(workflowIds.payment(lateTenant.id, body.submitOrderId)).result();
      expect(result).toEqual(body);
      expect(await authorizationsFor(body.submitOrderId)).toBe(1);
    }
  });
});

describe('an answer slower than SUBMIT_ANSWER_TIMEOUT_MS', () => {
  let quick: TestApp;
  let quickTenant: PaymentTenant;
  beforeAll(async () => {
    quick = await startTestApp({ SUBMIT_ANSWER_TIMEOUT_MS: '1000' }, { hostWorker: true });
    quickTenant = await createPaymentTenant(quick);
    // .98: the sandbox answers after 2.5 s.
    await quick.orm.em.fork().execute(`update products set price = '12.98' where id = ?`, [quickTenant.productId]);
  });
  afterAll(() => quick?.close());

  it('is a 503 on time, and a retry with the same Idempotency-Key gets the payment\'s answer', async () => {
    const body = submitBody('4242424242424242');
    const key = { 'idempotency-key': `slow-${crypto.randomUUID()}` };
    // The processor answers long after the gateway's answer time: a 503 is the gateway not waiting for it.
    const first = await post(quick, `/api/${quickTenant.productId}`, quickTenant.apiKey, body, key);
    expect(first.status).toBe(503);
    const retry = await vi.waitFor(
      async () => {
        const answer = await post(quick, `/api/${quickTenant.productId}`, quickTenant.apiKey, body, key);
        expect(answer.status).toBe(200);
        return answer;
      },
      { timeout: 20_000, interval: 500 },
    );
    expect(retry.body).toMatchObject({ info: 'Success', chargeSuccess: true });
    expect(await authorizationsFor(retry.body.submitOrderId)).toBe(1);
  });
});

describe('payments in line (GATEWAY_PAYMENTS_AT_ONCE)', () => {
  let narrow: TestApp;
  let narrowTenant: PaymentTenant;
  beforeAll(async () => {
    // One payment's first step at a time; a caller waits twelve seconds at most (room for a payment on a busy machine:
    // with four, the second submit below had three seconds for its whole payment and sometimes ran out under CI load,
    // and with eight, six seconds once the whole suite ran beside it).
    narrow = await startTestApp({ GATEWAY_PAYMENTS_AT_ONCE: '1', SUBMIT_ANSWER_TIMEOUT_MS: '12000' }, { hostWorker: true });
    narrowTenant = await createPaymentTenant(narrow);
  });
  afterAll(() => narrow?.close());

  it('submits beyond the line\'s width wait their turn and are all answered', async () => {
    const bodies = Array.from({ length: 6 }, (_, index) => submitBody(index % 2 === 0 ? '4242424242424242' : '4000000000000002'));
    const answers = await Promise.all(bodies.map((body) => post(narrow, `/api/${narrowTenant.productId}`, narrowTenant.apiKey, body)));
    expect(answers.map(({ status, body }) => [status, body.info])).toEqual(bodies.map((_, index) => [200, index % 2 === 0 ? 'Success' : 'Error']));
  });

  /** A payment whose first step waits on its customer's row, holding the line's only place until its caller's 503. */
  async function holdTheLine() {
    const blocked = await createPaymentTenant(narrow);
    const email = `line-${crypto.randomUUID()}@example.com`;
    expect((await post(narrow, `/api/${blocked.productId}`, blocked.apiKey, submitBody('4242424242424242', { email }))).status).toBe(200);
    const locker = narrow.orm.em.fork();
    await locker.begin();
    await locker.execute(`select id from customers where tenant_id = ? and email = ? for update`, [blocked.id, email]);
    const first = post(narrow, `/api/${blocked.productId}`, blocked.apiKey, submitBody('4242424242424242', { email }));
    // This test's hold only: another suite's submits waiting on their customers do not count.
    await waitForLockWaiters(narrow.orm, '%insert into customers%', { count: 1, exactly: true, blockedBy: await backendPidOf(locker), timeoutMs: 5_000 });
    return {
      first,
      async release() {
        if (locker.isInTransaction()) await locker.rollback();
        // The blocked payment goes on once its row is free, and ends approved.
        await vi.waitFor(
          async () => expect(await narrow.orm.em.fork().execute(`select state from orders where product_id = ? and state = 'approved'`, [blocked.productId])).toHaveLength(2),
          { timeout: 15_000, interval: 100 },
        );
      },
    };
  }

  it('a submit waits its turn behind a payment that holds the line: answered after that one\'s caller got its 503', async () => {
    const line = await holdTheLine();
    try {
      const answered: string[] = [];
      void line.first.then(() => answered.push('first'));
      // Ten seconds into the first one's wait: its place frees at its caller's 503, with ten of this one's twelve left.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const second = await post(narrow, `/api/${narrowTenant.productId}`, narrowTenant.apiKey, submitBody('4242424242424242'));
      answered.push('second');
      expect((await line.first).status).toBe(503);
      expect(second.body).toMatchObject({ info: 'Success' });
      expect(answered).toEqual(['first', 'second']);
    } finally {
      await line.release();
    }
  }, 60_000);

  it('a submit whose turn comes with less than half its answer time left is not started: its 503 comes then, nothing is charged', async () => {
    const line = await holdTheLine();
    try {
      const email = `too-late-${crypto.randomUUID()}@example.com`;
      // Half a second into the first one's wait: its place frees with about half a second of this one's twelve left.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const second = await post(narrow, `/api/${narrowTenant.productId}`, narrowTenant.apiKey, submitBody('4242424242424242', { email }));
      expect((await line.first).status).toBe(503);
      expect(second.status).toBe(503);
      expect(second.body).toMatchObject({ message: expect.stringMatching(/not started/) });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await narrow.orm.em.fork().execute(`select 1 from orders o join customers c on c.id = o.customer_id where c.email = ?`, [email]), 'no payment was started for it').toHaveLength(0);
      // Nor does it count against the card's or the e-mail's velocity: its slot was given back.
      expect(await narrow.orm.em.fork().execute(`select 1 from submit_attempts where product_id = ? and email = ?`, [narrowTenant.productId, email]), 'velocity slot given back').toHaveLength(0);
    } finally {
      await line.release();
    }
  }, 60_000);
});
