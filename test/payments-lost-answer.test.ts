import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createMerchantTenant, merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';
import { call, paymentBody } from './support/payments-api.ts';
import { undocumentedParts } from './support/openapi-answers.ts';
import { startProcessorFront } from './support/processor-front.ts';
import { rebillMayHaveCharged } from '../data/queries/rebills.ts';
import { refuseRows } from './support/refusals.ts';

let app: TestApp;
let front: Awaited<ReturnType<typeof startProcessorFront>>;

beforeAll(async () => {
  // The processor refuses the first status inquiry (401), as one refusing our credentials would.
  front = await startProcessorFront(inject('sandboxProcessorUrl'), { refusedInquiries: 1 });
  app = await startTestApp({ SANDBOX_PROCESSOR_URL: front.url });
  await app.startWorker();
});
afterAll(async () => {
  await app?.close();
  await front?.close();
});

describe('an authorization whose answer was lost while the processor cannot be asked about it', () => {
  it('is asked about again later, never recorded as failed: the sale the processor approved is the payment, and refundable', async () => {
    // .98: the sandbox answers after the 1 s processor timeout, so the answer is lost and the gateway must inquire.
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('slow', '10.98')], merchantAccounts: [merchantAccount('LOST-1')] });
    const idempotency = { 'idempotency-key': `lost-${randomUUID()}` };
    let answer = await post(app, `/api/${tenant.products.slow}`, tenant.apiKey, submitBody('4242424242424242'), idempotency);
    // The caller may meet a 503 ("still being processed") while the inquiry waits; the same key answers once known.
    for (let tries = 0; answer.status === 503 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      answer = await post(app, `/api/${tenant.products.slow}`, tenant.apiKey, submitBody('4242424242424242'), idempotency);
    }
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636 });
    expect(front.inquiries()).toBeGreaterThanOrEqual(2);

    const orderId = answer.body.submitOrderId as number;
    await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, orderId)).result();
    const [order] = await app.orm.em.fork().execute<{ state: string }[]>(`select state from orders where id = ?`, [orderId]);
    expect(order!.state).toBe('approved');
    const [sale] = await app.orm.em.fork().execute<{ reference: string; sent_at: string; completed_at: string; opened_at: string }[]>(
      `select t.reference, t.sent_at, t.completed_at, o.created_at as opened_at from transactions t join orders o on o.id = t.order_id where t.order_id = ? and t.success`,
      [orderId],
    );
    // `sent` is when the authorization went out, right after the order opened in the same step, not when its answer
    // was recorded (after the 1 s processor timeout, or later).
    const [openedAt, sentAt, completedAt] = [sale!.opened_at, sale!.sent_at, sale!.completed_at].map((time) => new Date(time).getTime()) as [number, number, number];
    expect(sentAt - openedAt).toBeLessThan(1_000);
    expect(completedAt - sentAt).toBeGreaterThanOrEqual(1_000);
    expect(await (await fetch(`${inject('sandboxProcessorUrl')}/v1/authorizations/${sale!.reference}`)).json()).toMatchObject({ status: 'approved' });
    expect((await call(app, 'POST', `/payments/pay_${orderId}/refund`, tenant.apiKey, { amount: 100 })).body).toMatchObject({ status: 'succeeded' });
  });
});

describe('a processor approval with fields longer than the gateway keeps', () => {
  let odd: TestApp;
  let oddFront: Awaited<ReturnType<typeof startProcessorFront>>;
  beforeAll(async () => {
    oddFront = await startProcessorFront(inject('sandboxProcessorUrl'), { approvalFields: { authCode: 'A'.repeat(30), eci: 'not-an-eci' } });
    odd = await startTestApp({ SANDBOX_PROCESSOR_URL: oddFront.url });
    await odd.startWorker();
  });
  afterAll(async () => {
    await odd?.close();
    await oddFront?.close();
  });

  it('is recorded at once as the approval it is (the auth code cut to its column, the non-ECI dropped), not left unknown', async () => {
    const tenant = await createMerchantTenant(odd, { products: [oneOffProduct('odd', '10.00')], merchantAccounts: [merchantAccount('ODD-1')] });
    const answer = await post(odd, `/api/${tenant.products.odd}`, tenant.apiKey, submitBody('4242424242424242'));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636 });
    const [row] = await odd.orm.em.fork().execute(`select auth_code, eci, success, sent_at <= completed_at as sent_first from transactions where order_id = ?`, [answer.body.submitOrderId]);
    expect(row).toEqual({ auth_code: 'A'.repeat(20), eci: null, success: true, sent_first: true });
  });
});

describe('a processor answering at great length (a proxy\'s error page, a debug dump)', () => {
  let verbose: TestApp;
  let verboseFront: Awaited<ReturnType<typeof startProcessorFront>>;
  beforeAll(async () => {
    // 3 MB: more than a Temporal payload may hold.
    verboseFront = await startProcessorFront(inject('sandboxProcessorUrl'), { approvalFields: { debug: 'x'.repeat(3 * 1024 * 1024) } });
    verbose = await startTestApp({ SANDBOX_PROCESSOR_URL: verboseFront.url });
    await verbose.startWorker();
  });
  afterAll(async () => {
    await verbose?.close();
    await verboseFront?.close();
  });

  it('is read for its outcome and kept cut to its first 4 KB: in the record, the answer and the payment\'s history', async () => {
    const tenant = await createMerchantTenant(verbose, { products: [oneOffProduct('verbose', '10.00')], merchantAccounts: [merchantAccount('VERBOSE-1')] });
    const answer = await post(verbose, `/api/${tenant.products.verbose}`, tenant.apiKey, submitBody('4242424242424242'));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636 });
    const [shown] = answer.body.gatewayResponses as { response: string }[];
    expect(shown!.response.length).toBeLessThan(4200);
    expect(shown!.response).toMatch(/^\{"id":"sbx_.*more characters not kept\)$/);

    const orderId = answer.body.submitOrderId as number;
    const [row] = await verbose.orm.em.fork().execute<{ size: number }[]>(`select length(gateway_response::text) as size from transactions where order_id = ?`, [orderId]);
    expect(row!.size).toBeLessThan(4300);
    const handle = verbose.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, orderId));
    await handle.result();
    const history = await handle.fetchHistory();
    expect(JSON.stringify(history).length).toBeLessThan(200_000);
  });

  it('is not read past 8 MB: the outcome is asked for by inquiry, as for an answer that never came', async () => {
    const hugeFront = await startProcessorFront(inject('sandboxProcessorUrl'), { approvalFields: { debug: 'x'.repeat(9 * 1024 * 1024) } });
    const huge = await startTestApp({ SANDBOX_PROCESSOR_URL: hugeFront.url });
    try {
      await huge.startWorker();
      const tenant = await createMerchantTenant(huge, { products: [oneOffProduct('huge', '10.00')], merchantAccounts: [merchantAccount('HUGE-1')] });
      const answer = await post(huge, `/api/${tenant.products.huge}`, tenant.apiKey, submitBody('4242424242424242'));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636 });
      const responses = (answer.body.gatewayResponses as { httpStatus: number; response: string }[]).map(({ httpStatus, response }) => [httpStatus, response.slice(0, 40)]);
      expect(responses).toEqual([[0, expect.stringMatching(/^answer longer than 8388608 bytes/)], [200, expect.stringMatching(/^\{"id":"sbx_/)]]);
      expect(await authorizationsFor(answer.body.submitOrderId as number)).toBe(1);
    } finally {
      await huge.close();
      await hugeFront.close();
    }
  });
});

describe('an approval the database refuses to record for good', () => {
  it('ends the payment failed at once and voids the approval: the card keeps no charge the gateway cannot show', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('unrecorded', '10.00')], merchantAccounts: [merchantAccount('UNRECORDED-1')] });
    const email = `unrecorded-${randomUUID().slice(0, 8)}@example.com`;
    // PostgreSQL refuses every transaction of this e-mail (a constraint the attempt breaks), whatever retries do.
    const em = app.orm.em.fork();
    const allow = await refuseRows(app.orm, 'transactions', 'insert', `new.email = '${email}'`);
    try {
      const answer = await post(app, `/api/${tenant.products.unrecorded}`, tenant.apiKey, submitBody('4242424242424242', { email }));
      expect(answer.body).toMatchObject({ info: 'Error', chargeSuccess: false });
      const orderId = answer.body.submitOrderId as number;
      await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, orderId)).result();

      const atProcessor = (await (await fetch(`${inject('sandboxProcessorUrl')}/v1/authorizations/ord${orderId}-a1`)).json()) as { status: string };
      expect(atProcessor.status).toBe('voided');
      const [order] = await em.execute<{ state: string }[]>(`select state from orders where id = ?`, [orderId]);
      expect(order!.state).toBe('failed');
    } finally {
      await allow();
    }
  });
});

describe('an approval recorded before a later step fails for good', () => {
  it('is voided and shown voided: a void transaction refers to it, nothing refundable, nothing counted on its monthly cap', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('unsettled', '10.00')], merchantAccounts: [merchantAccount('UNSETTLED-1')] });
    const productId = tenant.products.unsettled!;
    // The approval is recorded; PostgreSQL then refuses, for good, to settle the order as approved.
    const em = app.orm.em.fork();
    const allow = await refuseRows(app.orm, 'orders', 'update', `new.state = 'approved' and new.product_id = ${productId}`);
    try {
      const answer = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242'));
      expect(answer.body).toMatchObject({ info: 'Error', chargeSuccess: false });
      const orderId = answer.body.submitOrderId as number;
      await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, orderId)).result();

      const atProcessor = (await (await fetch(`${inject('sandboxProcessorUrl')}/v1/authorizations/ord${orderId}-a1`)).json()) as { status: string };
      expect(atProcessor.status).toBe('voided');
      const rows = await em.execute<{ kind: string; success: boolean; refundable: boolean; status_id: number; original_transaction_id: string | null; id: string }[]>(
        `select id, kind, success, refundable, status_id, original_transaction_id from transactions where order_id = ? order by sent_at`,
        [orderId],
      );
      expect(rows).toEqual([
        expect.objectContaining({ kind: 'authorization', success: true, refundable: false }),
        expect.objectContaining({ kind: 'void', success: true, status_id: 4166, original_transaction_id: rows[0]!.id }),
      ]);
      const [volume] = await em.execute<{ approved: string }[]>(
        `select coalesce(sum(v.approved_amount), 0)::text as approved from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.tenant_id = ?`,
        [tenant.id],
      );
      expect(Number(volume!.approved)).toBe(0);
      const [order] = await em.execute<{ state: string }[]>(`select state from orders where id = ?`, [orderId]);
      expect(order!.state).toBe('failed');

      // Were this a rebill, billing could charge its period again: the approval is voided. Without its void (one the
      // processor refused, say) the failed order may have charged the card, and billing must pause instead.
      expect(await rebillMayHaveCharged(em, orderId)).toBe(false);
      await em.execute(`delete from transactions where order_id = ? and kind = 'void'`, [orderId]);
      expect(await rebillMayHaveCharged(em, orderId)).toBe(true);
    } finally {
      await allow();
    }
  });
});

describe('a payment that does not answer within its caller\'s time', () => {
  let hasty: TestApp;
  let refusing: Awaited<ReturnType<typeof startProcessorFront>>;
  beforeAll(async () => {
    // Answers 503 after 1.5 s. The sandbox answers .98 amounts after 2.5 s, beyond the 1 s processor timeout, and
    // this front refuses the first inquiry after it: each payment learns its outcome by a later inquiry, seconds on.
    refusing = await startProcessorFront(inject('sandboxProcessorUrl'), { refusedInquiries: 1 });
    hasty = await startTestApp({ SANDBOX_PROCESSOR_URL: refusing.url, SUBMIT_ANSWER_TIMEOUT_MS: '1500' });
    await hasty.startWorker();
  });
  afterAll(async () => {
    await hasty?.close();
    await refusing?.close();
  });

  it('names the payment that goes on, so a caller without an Idempotency-Key looks it up rather than paying twice', async () => {
    const tenant = await createMerchantTenant(hasty, { products: [oneOffProduct('payments-api', '0.00'), oneOffProduct('slow', '10.98')], merchantAccounts: [merchantAccount('LATE-1')] });
    const late = await call(hasty, 'POST', '/payments', tenant.apiKey, paymentBody('4242424242424242', { amount: 1098 }));
    expect(late.status).toBe(503);
    const paymentId = late.body.error.payment_id as string;
    expect(paymentId).toMatch(/^pay_\d+$/);
    expect(late.body.error).toMatchObject({ type: 'api_error', code: 'still_processing' });
    expect(late.body.error.message).toBe(`Payment ${paymentId} is still being processed; GET /payments/${paymentId} gives its result (sending the request again would make a second payment)`);
    expect(await undocumentedParts(hasty.baseUrl, '/payments', 'post', 503, late.body)).toEqual([]);
    await vi.waitFor(async () => expect((await call(hasty, 'GET', `/payments/${paymentId}`, tenant.apiKey)).body).toMatchObject({ id: paymentId, status: 'succeeded', amount: 1098 }), { timeout: 45_000, interval: 500 });

    // The submit route names it too; with a key, the key is the way back.
    refusing.setRules({ refusedInquiries: 1 });
    const keyed = await post(hasty, `/api/${tenant.products.slow}`, tenant.apiKey, submitBody('4242424242424242'), { 'idempotency-key': `late-${randomUUID()}` });
    expect(keyed.status).toBe(503);
    expect(keyed.body.message).toMatch(/^Payment pay_\d+ is still being processed; retry with the same Idempotency-Key, or GET \/payments\/pay_\d+, to get its result$/);
  }, 90_000);
});

describe('a payment started while no worker runs it', () => {
  let idle: TestApp;
  beforeAll(async () => {
    // No worker polls this app's task queue until the test starts one: the payment's first step waits for it.
    idle = await startTestApp({ SUBMIT_ANSWER_TIMEOUT_MS: '1500' });
  });
  afterAll(async () => {
    await idle?.close();
  });

  it('is "not recorded yet" (503, ask again) until its first step runs, never "no such payment"', async () => {
    const tenant = await createMerchantTenant(idle, { products: [oneOffProduct('payments-api', '0.00')], merchantAccounts: [merchantAccount('IDLE-1')] });
    const late = await call(idle, 'POST', '/payments', tenant.apiKey, paymentBody('4242424242424242'));
    expect(late.status).toBe(503);
    const paymentId = late.body.error.payment_id as string;
    const waiting = await call(idle, 'GET', `/payments/${paymentId}`, tenant.apiKey);
    expect(waiting).toMatchObject({ status: 503, body: { error: { type: 'api_error', code: 'still_processing', message: `Payment ${paymentId} has started and is not recorded yet; ask again shortly` } } });
    expect(await undocumentedParts(idle.baseUrl, '/payments/{id}', 'get', 503, waiting.body)).toEqual([]);
    // A payment never started is still no such payment.
    expect((await call(idle, 'GET', '/payments/pay_2147483000', tenant.apiKey)).status).toBe(404);

    await idle.startWorker();
    await vi.waitFor(async () => expect((await call(idle, 'GET', `/payments/${paymentId}`, tenant.apiKey)).body).toMatchObject({ id: paymentId, status: 'succeeded' }), { timeout: 30_000, interval: 500 });
  }, 60_000);
});
