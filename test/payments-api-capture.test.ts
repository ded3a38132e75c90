import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import type { MerchantTenant } from './support/payments.ts';
import { call, createPaymentsApiTenant, paymentBody } from './support/payments-api.ts';

let app: TestApp;
let tenant: MerchantTenant;

// A held authorization is voided by its durable timer after 3 seconds here (configuration, not the workflow).
beforeAll(async () => {
  app = await startTestApp({ AUTHORIZATION_VOID_AFTER_SECONDS: '3' });
  await app.startWorker();
  tenant = await createPaymentsApiTenant(app);
});
afterAll(() => app?.close());

const pay = (body: unknown) => call(app, 'POST', '/payments', tenant.apiKey, body);
const post = (path: string, body?: unknown) => call(app, 'POST', path, tenant.apiKey, body);
const get = (path: string) => call(app, 'GET', path, tenant.apiKey);
const transactionsOf = (paymentId: string) =>
  app.orm.em
    .fork()
    .execute<{ id: string; kind: string; success: boolean; refundable: boolean; status_id: number; original_transaction_id: string | null }[]>(
      `select id, kind, success, refundable, status_id, original_transaction_id from transactions where order_id = ? order by sent_at`,
      [Number(paymentId.slice(4))],
    );

describe('authorization only (capture: false)', () => {
  it('holds the amount, refuses refunds until captured, then captures once', async () => {
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    expect(held.body).toMatchObject({ status: 'requires_capture', status_id: 3367, amount_refundable: 0 });
    const [authorization] = await transactionsOf(held.body.id);
    expect(authorization).toMatchObject({ kind: 'authorization', success: true, refundable: false });
    expect((await post(`/payments/${held.body.id}/refund`, {})).body.error).toMatchObject({ code: 'payment_not_refundable' });

    const captured = await post(`/payments/${held.body.id}/capture`);
    expect(captured.status).toBe(200);
    expect(captured.body).toMatchObject({ id: held.body.id, status: 'succeeded', amount_refundable: 1999 });
    expect((await transactionsOf(held.body.id))[0]).toMatchObject({ refundable: true });
    // Asked again: the payment as it is. A void now is refused and changes nothing.
    expect((await post(`/payments/${held.body.id}/capture`)).body).toMatchObject({ status: 'succeeded' });
    const lateVoid = await post(`/payments/${held.body.id}/void`);
    expect(lateVoid.status).toBe(400);
    expect(lateVoid.body.error).toMatchObject({ type: 'invalid_request_error', code: 'payment_not_authorized' });
    expect((await post(`/payments/${held.body.id}/refund`, { amount: 999 })).body).toMatchObject({ status: 'succeeded' });
  });

  it('voids on request: a void transaction refers to the authorization, and a capture is then refused', async () => {
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    const voided = await post(`/payments/${held.body.id}/void`);
    expect(voided.body).toMatchObject({ status: 'canceled', failure_message: 'The authorization was voided before capture', amount_refundable: 0 });
    const [authorization, voidRow] = await transactionsOf(held.body.id);
    expect(voidRow).toMatchObject({ kind: 'void', success: true, status_id: 4166, original_transaction_id: authorization!.id });
    expect((await post(`/payments/${held.body.id}/capture`)).status).toBe(400);
  });

  it('voids an authorization nobody captures when its hold period ends (durable timer)', async () => {
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    await vi.waitFor(async () => expect((await get(`/payments/${held.body.id}`)).body.status).toBe('canceled'), { timeout: 15_000, interval: 250 });
    const rows = await transactionsOf(held.body.id);
    expect(rows.map((row) => row.kind)).toEqual(['authorization', 'void']);
    expect((await post(`/payments/${held.body.id}/capture`)).status).toBe(400);
  });

  it('decides a held authorization once when captures and voids race', async () => {
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(`/payments/${held.body.id}/${i % 2 === 0 ? 'capture' : 'void'}`)));
    const decided = answers.filter((answer) => answer.status === 200).map((answer) => answer.body.status);
    expect(new Set(decided).size).toBe(1);
    const final = (await get(`/payments/${held.body.id}`)).body.status;
    expect(decided[0]).toBe(final);
    for (const answer of answers.filter((a) => a.status !== 200)) expect(answer.body.error.code).toBe('payment_not_authorized');
    const kinds = (await transactionsOf(held.body.id)).map((row) => row.kind);
    expect(kinds).toEqual(final === 'canceled' ? ['authorization', 'void'] : ['authorization']);
  });

  it('refuses to capture or void a payment charged at once, and an unknown one', async () => {
    const charged = await pay(paymentBody('4242424242424242'));
    expect((await post(`/payments/${charged.body.id}/void`)).body.error).toMatchObject({ code: 'payment_not_authorized' });
    expect((await post('/payments/pay_999999999/capture')).status).toBe(404);
  });
});
