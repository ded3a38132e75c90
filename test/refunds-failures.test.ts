import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { temporalRefundRunner } from '../adapters/temporal/refund-runner.ts';
import { claimRefundForSending, reserveRefund, settleRefund, withdrawUnstartedRefund } from '../data/queries/refunds.ts';
import { requestRefund } from '../services/refunds/request-refund.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { freePort } from './support/free-port.ts';
import { backendPidOf, waitForLockWaiters } from './support/lock-waiters.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import type { MerchantTenant } from './support/payments.ts';
import { call, createPaymentsApiTenant, paymentBody } from './support/payments-api.ts';

/**
 * Refunds on their unhappy paths (issue 12 review H1-H3): nothing left to refund, replays of a full refund, a
 * processor that can no longer be reached for a refund or its inquiry, and a workflow that cannot be started.
 */
let app: TestApp;
let tenant: MerchantTenant;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
  tenant = await createPaymentsApiTenant(app);
});
afterAll(() => app?.close());

const pay = (body: unknown) => call(app, 'POST', '/payments', tenant.apiKey, body);
const refund = (paymentId: string, body: unknown = {}, headers: Record<string, string> = {}) => call(app, 'POST', `/payments/${paymentId}/refund`, tenant.apiKey, body, headers);
const get = (path: string) => call(app, 'GET', path, tenant.apiKey);
const orderOf = (paymentId: string) => Number(paymentId.slice('pay_'.length));
const em = () => app.orm.em.fork() as EntityManager;

interface RefundRow {
  id: string;
  state: string;
  amount: string;
  status_id: number | null;
  submitted_at: Date | null;
  review_required_at: Date | null;
}
const refundsOf = (paymentId: string) => em().execute<RefundRow[]>(`select * from refunds where order_id = ? order by created_at`, [orderOf(paymentId)]);
const originalOf = async (paymentId: string) =>
  (await em().execute<{ refunded_amount: string; refund_reserved_amount: string }[]>(
    `select refunded_amount, refund_reserved_amount from transactions where order_id = ? and kind = 'authorization'`,
    [orderOf(paymentId)],
  ))[0]!;
const refundTransactionsOf = (paymentId: string) => em().execute<{ id: string }[]>(`select id from transactions where order_id = ? and kind = 'refund'`, [orderOf(paymentId)]);
/** The payment's processor is no longer configured (a gateway retired after the charge). */
const retireProcessorOf = (paymentId: string) => em().execute(`update transactions set gateway = 'retired-processor' where order_id = ?`, [orderOf(paymentId)]);

const nothingLeft = {
  status: 402,
  body: { error: { type: 'invalid_request_error', code: 'credit_exceeds_original_amount', message: 'Credit Exceeds Original Amount: at most 0 can still be refunded', param: 'amount', status_id: 4313 } },
};

describe('a refund of what is left (no amount) when nothing is left', () => {
  it('is declined with 4313, never a 500', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    expect((await refund(payment.body.id)).body).toMatchObject({ status: 'succeeded', amount: 1999 });
    expect(await refund(payment.body.id)).toEqual(nothingLeft);
    expect(await refund(payment.body.id, { reason: 'duplicate' })).toEqual(nothingLeft);
  });

  it('answers a replay with the same Idempotency-Key with the first refund, once it has settled', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    const key = `full-${crypto.randomUUID()}`;
    const first = await refund(payment.body.id, {}, { 'Idempotency-Key': key });
    expect(first.body).toMatchObject({ status: 'succeeded', amount: 1999 });
    expect(await refund(payment.body.id, {}, { 'Idempotency-Key': key })).toEqual(first);
  });

  it('answers replays arriving while the first is in flight with the same refund, and refunds once', async () => {
    // .98 amounts are answered by the sandbox after the processor timeout: the refund stays in flight for seconds.
    const payment = await pay(paymentBody('4242424242424242', { amount: 1098 }));
    const key = `inflight-${crypto.randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => refund(payment.body.id, {}, { 'Idempotency-Key': key })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    expect(await refundsOf(payment.body.id)).toHaveLength(1);
    expect(await refund(payment.body.id, {}, { 'Idempotency-Key': key })).toMatchObject({ status: 200, body: { id: answers[0]!.body.id, status: 'succeeded', amount: 1098 } });
  });

  it('of 8 full refunds at once, refunds once and declines the other seven with 4313', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    const answers = await Promise.all(Array.from({ length: 8 }, () => refund(payment.body.id)));
    expect(answers.filter((answer) => answer.status === 200).map((answer) => answer.body)).toEqual([expect.objectContaining({ status: 'succeeded', amount: 1999 })]);
    const declined = answers.filter((answer) => answer.status === 402);
    expect(declined).toHaveLength(7);
    for (const answer of declined) expect(answer.body.error).toMatchObject({ code: 'credit_exceeds_original_amount', status_id: 4313 });
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: '19.99', refund_reserved_amount: '0.00' });
  });
});

describe('Idempotency-Key of a refund', () => {
  it('is a conflict when reused for another payment (even one that cannot be refunded) or another reason', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    const declined = await pay(paymentBody('4000000000000002'));
    const key = `bound-${crypto.randomUUID()}`;
    expect((await refund(payment.body.id, { amount: 100, reason: 'requested_by_customer' }, { 'Idempotency-Key': key })).status).toBe(200);
    const conflict = { status: 409, body: { error: expect.objectContaining({ type: 'idempotency_error', code: 'idempotency_key_reused' }) } };
    expect(await refund(declined.body.id, { amount: 100, reason: 'requested_by_customer' }, { 'Idempotency-Key': key })).toMatchObject(conflict);
    expect(await refund(payment.body.id, { amount: 100, reason: 'fraudulent' }, { 'Idempotency-Key': key })).toMatchObject(conflict);
    // Omitting the amount ("what is left") is another request than naming one, whatever is left now.
    expect(await refund(payment.body.id, { reason: 'requested_by_customer' }, { 'Idempotency-Key': key })).toMatchObject(conflict);
    const whole = await pay(paymentBody('4242424242424242'));
    const restKey = `rest-${crypto.randomUUID()}`;
    expect((await refund(whole.body.id, {}, { 'Idempotency-Key': restKey })).body).toMatchObject({ status: 'succeeded', amount: 1999 });
    expect(await refund(whole.body.id, { amount: 1999 }, { 'Idempotency-Key': restKey })).toMatchObject(conflict);
    expect((await get(`/payments/${payment.body.id}`)).body).toMatchObject({ amount_refunded: 100 });
    expect((await get(`/payments/${whole.body.id}`)).body).toMatchObject({ amount_refunded: 1999 });
  });
});

describe('a refund whose processor cannot be reached', () => {
  it('fails and releases its hold when it could never be sent (its processor is no longer configured)', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    await retireProcessorOf(payment.body.id);
    const answer = await refund(payment.body.id, { amount: 500 });
    expect(answer).toMatchObject({ status: 200, body: { status: 'failed', status_id: 4292, amount: 500, transaction_id: null } });
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: '0.00', refund_reserved_amount: '0.00' });
    expect((await get(`/payments/${payment.body.id}`)).body).toMatchObject({ amount_refunded: 0, amount_refundable: 1999 });
  });

  it('stays pending with its amount held, marked for review, when its outcome cannot be learnt; a replay answers it, not 503', async () => {
    // The sandbox answers .98 refunds after the processor timeout, so the workflow must ask what became of it; the
    // processor is retired while the refund is on its way, so the inquiry cannot be made (the money may have moved).
    const payment = await pay(paymentBody('4242424242424242', { amount: 1098 }));
    const key = `unknown-${crypto.randomUUID()}`;
    const first = refund(payment.body.id, { amount: 598 }, { 'Idempotency-Key': key });
    const refundId = await vi.waitFor(
      async () => {
        const [row] = await refundsOf(payment.body.id);
        expect(row?.submitted_at).toBeTruthy();
        return row!.id;
      },
      { timeout: 10_000, interval: 20 },
    );
    // Once the send has started, it has its processor (it then waits 1 s for the late answer).
    const workflow = app.temporal.client.workflow.getHandle(workflowIds.refund(tenant.id, refundId));
    await vi.waitFor(
      async () => expect((await workflow.describe()).raw.pendingActivities?.some((a) => a.activityType?.name === 'sendRefund' && a.lastStartedTime)).toBe(true),
      { timeout: 10_000, interval: 20 },
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await retireProcessorOf(payment.body.id);
    expect(await first).toMatchObject({ status: 200, body: { status: 'pending', status_id: 4283, amount: 598, failure_message: expect.stringContaining('under review') } });
    const [row] = await refundsOf(payment.body.id);
    expect(row).toMatchObject({ state: 'pending', review_required_at: expect.anything() });
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: '0.00', refund_reserved_amount: '5.98' });
    const replay = await refund(payment.body.id, { amount: 598 }, { 'Idempotency-Key': key });
    expect(replay).toEqual(await first);
    expect((await get(`/payments/${payment.body.id}`)).body).toMatchObject({ amount_refundable: 500 });
  });
});

describe('a refund whose workflow cannot be started', () => {
  /** The gateway's refund service, with a Temporal client whose server cannot be reached. */
  async function unreachableTemporal() {
    const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}`, connectTimeout: '500 milliseconds' });
    return temporalRefundRunner({ client: new Client({ connection }), taskQueue: app.taskQueue, answerTimeoutMs: 5_000 });
  }

  it('answers 503 and leaves nothing behind: no refund, nothing held, and the same key refunds later', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    const key = `unstarted-${crypto.randomUUID()}`;
    const deps = { em: em(), runner: await unreachableTemporal(), settings: { processorTimeoutMs: 1000, webhookSchedule: [1], webhookTimeoutMs: 1000 } };
    await expect(requestRefund(deps, { tenantId: tenant.id, paymentId: payment.body.id, idempotencyKey: key })).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('nothing was refunded or held'),
    });
    expect(await refundsOf(payment.body.id)).toEqual([]);
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: '0.00', refund_reserved_amount: '0.00' });
    expect((await refund(payment.body.id, {}, { 'Idempotency-Key': key })).body).toMatchObject({ status: 'succeeded', amount: 1999 });
  }, 60_000);

  it('a workflow started after its refund was withdrawn sends nothing; a claimed refund is never withdrawn', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    const runner = temporalRefundRunner({ client: app.temporal.client, taskQueue: app.taskQueue, answerTimeoutMs: 20_000 });
    const settings = { processorTimeoutMs: 1000, webhookSchedule: [1], webhookTimeoutMs: 1000 };

    const withdrawn = await reserveRefund(em(), { tenantId: tenant.id, orderId: orderOf(payment.body.id), amount: '1.00' });
    if (withdrawn.kind !== 'reserved') throw new Error(withdrawn.kind);
    expect(await withdrawUnstartedRefund(em(), tenant.id, withdrawn.refund.id)).toBe(true);
    expect(await runner.run({ tenantId: tenant.id, refundId: withdrawn.refund.id, ...settings })).toMatchObject({ state: 'withdrawn' });
    expect(await refundTransactionsOf(payment.body.id)).toEqual([]);

    const claimed = await reserveRefund(em(), { tenantId: tenant.id, orderId: orderOf(payment.body.id), amount: '2.00' });
    if (claimed.kind !== 'reserved') throw new Error(claimed.kind);
    expect(await runner.run({ tenantId: tenant.id, refundId: claimed.refund.id, ...settings })).toMatchObject({ state: 'succeeded' });
    expect(await withdrawUnstartedRefund(em(), tenant.id, claimed.refund.id)).toBe(false);
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: '2.00', refund_reserved_amount: '0.00' });
  });

  it('never withdraws a refund its workflow claimed, even one whose claim commits while the withdrawal waits on it', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    const reserve = async (amount: string) => {
      const reserved = await reserveRefund(em(), { tenantId: tenant.id, orderId: orderOf(payment.body.id), amount });
      if (reserved.kind !== 'reserved') throw new Error(reserved.kind);
      return reserved.refund.id;
    };
    // Claimed (on its way to the processor, still pending): the request that reserved it may no longer undo it.
    const claimed = await reserve('1.00');
    expect(await claimRefundForSending(em(), claimed)).toBe('claimed');
    expect(await withdrawUnstartedRefund(em(), tenant.id, claimed)).toBe(false);
    // Claimed in a transaction still open when the withdrawal comes: the withdrawal waits for it, then finds it claimed.
    const racing = await reserve('2.00');
    const claim = em();
    await claim.begin();
    try {
      expect(await claimRefundForSending(claim, racing)).toBe('claimed');
      const withdrawal = withdrawUnstartedRefund(em(), tenant.id, racing);
      await waitForLockWaiters(app.orm, 'delete from refunds%', { count: 1, blockedBy: await backendPidOf(claim) });
      await claim.commit();
      expect(await withdrawal).toBe(false);
    } finally {
      if (claim.isInTransaction()) await claim.rollback();
    }
    // Both stay, held for the processor's answer.
    expect(await refundsOf(payment.body.id)).toHaveLength(2);
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: '0.00', refund_reserved_amount: '3.00' });
  });

  it('lets exactly one of a withdrawal and its workflow win, for each of 8 refunds raced at once', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    const runner = temporalRefundRunner({ client: app.temporal.client, taskQueue: app.taskQueue, answerTimeoutMs: 20_000 });
    const settings = { processorTimeoutMs: 1000, webhookSchedule: [1], webhookTimeoutMs: 1000 };
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const reserved = await reserveRefund(em(), { tenantId: tenant.id, orderId: orderOf(payment.body.id), amount: '1.00' });
      if (reserved.kind !== 'reserved') throw new Error(reserved.kind);
      ids.push(reserved.refund.id);
    }
    // The withdrawals come later and later, so some find their refund already claimed by its workflow.
    const races = await Promise.all(
      ids.map(async (refundId, i) => {
        const [withdrawn, settlement] = await Promise.all([
          new Promise((resolve) => setTimeout(resolve, i * 40)).then(() => withdrawUnstartedRefund(em(), tenant.id, refundId)),
          runner.run({ tenantId: tenant.id, refundId, ...settings }),
        ]);
        return { withdrawn, state: settlement?.state };
      }),
    );
    for (const race of races) expect(race.state).toBe(race.withdrawn ? 'withdrawn' : 'succeeded');
    const refunded = races.filter((race) => race.state === 'succeeded').length;
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: `${refunded}.00`, refund_reserved_amount: '0.00' });
    expect(await refundTransactionsOf(payment.body.id)).toHaveLength(refunded);
    expect(await refundsOf(payment.body.id)).toHaveLength(refunded);
  });
});

describe('a refund settled by several runs at once (a settlement step run again while its first run commits)', () => {
  it('moves its hold once: refunded or released, never both, never twice, whichever run wins', async () => {
    const payment = await pay(paymentBody('4242424242424242', { amount: 1000 }));
    const refunds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const reserved = await reserveRefund(em(), { tenantId: tenant.id, orderId: orderOf(payment.body.id), amount: '2.50' });
      if (reserved.kind !== 'reserved') throw new Error(reserved.kind);
      refunds.push(reserved.refund.id);
    }
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: '0.00', refund_reserved_amount: '7.50' });
    // Each refund: eight settlements at once, successes and failures mixed, as replayed and racing activities would send them.
    for (const refundId of refunds) {
      const settled = await Promise.all(Array.from({ length: 8 }, (_, i) => settleRefund(em(), { refundId, succeeded: i % 2 === 0, statusId: i % 2 === 0 ? 2636 : 4273 })));
      expect(new Set(settled.map((record) => record.state)).size).toBe(1);
    }
    const states = (await refundsOf(payment.body.id)).map((row) => row.state);
    const refunded = states.filter((state) => state === 'succeeded').length;
    expect(states.every((state) => state === 'succeeded' || state === 'failed')).toBe(true);
    expect(await originalOf(payment.body.id)).toEqual({ refunded_amount: ['0.00', '2.50', '5.00', '7.50'][refunded], refund_reserved_amount: '0.00' });
  });
});

describe('GET /payments/{id}/refunds', () => {
  it('pages a payment refunded many times with limit and starting_after; a cursor of another payment is refused', async () => {
    const payment = await pay(paymentBody('4242424242424242', { amount: 1000 }));
    const made = await Promise.all(Array.from({ length: 12 }, () => refund(payment.body.id, { amount: 1 })));
    expect(made.map((answer) => answer.status)).toEqual(Array(12).fill(200));

    const byDefault = await get(`/payments/${payment.body.id}/refunds`);
    expect(byDefault.body).toMatchObject({ object: 'list', has_more: true });
    expect(byDefault.body.data).toHaveLength(10);
    const pages = [await get(`/payments/${payment.body.id}/refunds?limit=5`)];
    while (pages.at(-1)!.body.has_more) pages.push(await get(`/payments/${payment.body.id}/refunds?limit=5&starting_after=${pages.at(-1)!.body.data.at(-1).id}`));
    expect(pages.map((page) => page.body.data.length)).toEqual([5, 5, 2]);
    const paged = pages.flatMap((page) => page.body.data.map((r: { id: string }) => r.id));
    expect(new Set(paged)).toEqual(new Set(made.map((answer) => answer.body.id)));
    expect(paged.slice(0, 10)).toEqual(byDefault.body.data.map((r: { id: string }) => r.id));

    const other = await pay(paymentBody('4242424242424242'));
    const foreign = `/payments/${other.body.id}/refunds?starting_after=${paged[0]}`;
    expect(await get(foreign)).toMatchObject({ status: 404, body: { error: { code: 'resource_missing', param: 'starting_after' } } });
    expect((await get(`/payments/${payment.body.id}/refunds?starting_after=re_x`)).status).toBe(400);
    expect((await get(`/payments/${payment.body.id}/refunds?limit=101`)).status).toBe(400);
  });
});
