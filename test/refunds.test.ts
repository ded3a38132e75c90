import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { openOrm } from '../data/orm.ts';
import { reserveRefund } from '../data/queries/refunds.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import type { MerchantTenant } from './support/payments.ts';
import { call, createPaymentsApiTenant, paymentBody } from './support/payments-api.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';
import { undocumentedParts } from './support/openapi-answers.ts';
import { waitForLockWaiters } from './support/lock-waiters.ts';

let app: TestApp;
let tenant: MerchantTenant;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
  tenant = await createPaymentsApiTenant(app);
});
afterAll(() => app?.close());

const pay = (body: unknown, who: MerchantTenant = tenant) => call(app, 'POST', '/payments', who.apiKey, body);
const refund = (paymentId: string, body: unknown = {}, headers: Record<string, string> = {}, who: MerchantTenant = tenant) =>
  call(app, 'POST', `/payments/${paymentId}/refund`, who.apiKey, body, headers);
const get = (path: string) => call(app, 'GET', path, tenant.apiKey);

interface TransactionRow {
  id: string;
  kind: string;
  success: boolean;
  amount: string;
  refunded: boolean;
  refundable: boolean;
  refunded_amount: string;
  refund_reserved_amount: string;
  original_transaction_id: string | null;
  status_id: number;
}
const transactionsOf = (paymentId: string) =>
  app.orm.em.fork().execute<TransactionRow[]>(`select * from transactions where order_id = ? order by kind, sent_at`, [Number(paymentId.slice(4))]);

describe('POST /payments/{id}/refund', () => {
  it('refunds in full through the processor, records a refund transaction and marks the original refunded', async () => {
    const payment = await pay(paymentBody('4242424242424242'));
    const done = await refund(payment.body.id, { reason: 'requested_by_customer' });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      id: expect.stringMatching(/^re_[0-9a-f]{32}$/),
      object: 'refund',
      payment: payment.body.id,
      amount: 1999,
      currency: 'USD',
      status: 'succeeded',
      status_id: 2636,
      original_transaction_id: payment.body.transaction_id,
      transaction_id: expect.any(String),
      reason: 'requested_by_customer',
    });
    expect(await undocumentedParts(app.baseUrl, '/payments/{id}/refund', 'post', 200, done.body)).toEqual([]);
    const rows = await transactionsOf(payment.body.id);
    const original = rows.find((row) => row.kind === 'authorization')!;
    const refundRow = rows.find((row) => row.kind === 'refund')!;
    expect(original).toMatchObject({ refunded: true, refundable: false, refunded_amount: '19.99', refund_reserved_amount: '0.00' });
    expect(refundRow).toMatchObject({ id: done.body.transaction_id, success: true, amount: '19.99', original_transaction_id: original.id, refundable: false, status_id: 2636 });
    expect((await get(`/payments/${payment.body.id}`)).body).toMatchObject({ status: 'succeeded', amount_refunded: 1999, amount_refundable: 0, refunded: true });

    const more = await refund(payment.body.id, { amount: 1 });
    expect(more).toEqual({
      status: 402,
      body: { error: { type: 'invalid_request_error', code: 'credit_exceeds_original_amount', message: 'Credit Exceeds Original Amount: at most 0 can still be refunded', param: 'amount', status_id: 4313 } },
    });
    expect(await undocumentedParts(app.baseUrl, '/payments/{id}/refund', 'post', 402, more.body)).toEqual([]);
    const listed = await get(`/payments/${payment.body.id}/refunds`);
    expect(await undocumentedParts(app.baseUrl, '/payments/{id}/refunds', 'get', 200, listed.body)).toEqual([]);
    expect(listed.body.data.map((r: { id: string }) => r.id)).toEqual([done.body.id]);
  });

  it('refunds in parts; the original stays refundable until the captured amount is reached', async () => {
    const payment = await pay(paymentBody('4242424242424242', { amount: 1000 }));
    expect((await refund(payment.body.id, { amount: 300 })).body).toMatchObject({ status: 'succeeded', amount: 300 });
    let [original] = await transactionsOf(payment.body.id);
    expect(original).toMatchObject({ refunded: true, refundable: true, refunded_amount: '3.00' });
    expect((await refund(payment.body.id)).body).toMatchObject({ status: 'succeeded', amount: 700 });
    [original] = await transactionsOf(payment.body.id);
    expect(original).toMatchObject({ refunded: true, refundable: false, refunded_amount: '10.00' });
  });

  it('never refunds more than the captured amount, however many refunds arrive at once: the excess is declined with 4313', async () => {
    const payment = await pay(paymentBody('4242424242424242', { amount: 1999 }));
    const answers = await Promise.all(Array.from({ length: 12 }, () => refund(payment.body.id, { amount: 500 })));
    const succeeded = answers.filter((answer) => answer.status === 200);
    const declined = answers.filter((answer) => answer.status === 402);
    expect(succeeded).toHaveLength(3);
    expect(declined).toHaveLength(9);
    for (const answer of succeeded) expect(answer.body.status).toBe('succeeded');
    for (const answer of declined) expect(answer.body.error).toMatchObject({ code: 'credit_exceeds_original_amount', status_id: 4313 });
    const rows = await transactionsOf(payment.body.id);
    expect(rows.filter((row) => row.kind === 'refund' && row.success)).toHaveLength(3);
    expect(rows.find((row) => row.kind === 'authorization')).toMatchObject({ refunded_amount: '15.00', refund_reserved_amount: '0.00', refundable: true });
    // What is left is still refundable, to the cent.
    expect((await refund(payment.body.id)).body).toMatchObject({ status: 'succeeded', amount: 499 });
  });

  it('refunds "what is left" while partial refunds race it: it takes what they leave, never refused while money is left', async () => {
    for (let round = 0; round < 4; round++) {
      const payment = await pay(paymentBody('4242424242424242', { amount: 1999 }));
      const [, whatIsLeft] = await Promise.all([refund(payment.body.id, { amount: 500 }), refund(payment.body.id), refund(payment.body.id, { amount: 300 })]);
      expect(whatIsLeft.status, JSON.stringify(whatIsLeft.body)).toBe(200);
      // Whatever the order, the payment ends refunded in full, to the cent, and never beyond.
      expect((await get(`/payments/${payment.body.id}`)).body).toMatchObject({ amount_refunded: 1999, amount_refundable: 0, refunded: true });
    }
  });

  it('reserves "what is left" among 40 one-cent refunds at once on a pool as wide as a gateway\'s: never refused while money is left', async () => {
    // The harness gateway's pool of 5 serialises most of a burst; a production pool lets every refund race.
    const wide = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 30 });
    try {
      for (let round = 0; round < 4; round++) {
        const payment = await pay(paymentBody('4242424242424242', { amount: 5000 }));
        const orderId = Number(payment.body.id.slice('pay_'.length));
        const reserve = (amount?: string) => reserveRefund(wide.em.fork(), { tenantId: tenant.id, orderId, amount });
        const cents = (count: number) => Array.from({ length: count }, () => reserve('0.01'));
        const results = await Promise.all([...cents(20), reserve(undefined), ...cents(20)]);
        expect(results[20], `round ${round}`).toMatchObject({ kind: 'reserved' });
        const [held] = await app.orm.em.fork().execute<{ held: string }[]>(`select refunded_amount + refund_reserved_amount as held from transactions where order_id = ? and kind = 'authorization'`, [orderId]);
        // What is left took whatever the cents before it left; the cents after it found nothing: 50.00 held, to the cent.
        expect(held!.held).toBe('50.00');
      }
    } finally {
      await wide.close();
    }
  });

  it('keeps one refund per Idempotency-Key when eight partial refunds of it meet at its claim', async () => {
    // Partial: each finds room for its own amount, so only the key's unique claim keeps them one refund.
    const wide = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 12 });
    const held = wide.em.fork();
    try {
      const payment = await pay(paymentBody('4242424242424242', { amount: 5000 }));
      const orderId = Number(payment.body.id.slice('pay_'.length));
      const idempotencyKey = `meet-${randomUUID()}`;
      // The charge's row is held while they arrive: each looks its key up (none yet) and waits there.
      await held.begin();
      await held.execute(`select id from transactions where order_id = ? and kind = 'authorization' for update`, [orderId]);
      const reserving = Promise.all(Array.from({ length: 8 }, () => reserveRefund(wide.em.fork(), { tenantId: tenant.id, orderId, amount: '5.00', idempotencyKey })));
      await waitForLockWaiters(app.orm, '%for no key update of t%', { count: 8, exactly: true });
      await held.commit();
      const results = await reserving;
      expect(results.filter((result) => result.kind === 'reserved')).toHaveLength(1);
      const ids = new Set(results.map((result) => (result.kind === 'reserved' || result.kind === 'duplicate' ? result.refund.id : result.kind)));
      expect(ids.size).toBe(1);
      const [original] = await app.orm.em.fork().execute<{ reserved: string }[]>(`select refund_reserved_amount as reserved from transactions where order_id = ? and kind = 'authorization'`, [orderId]);
      expect(original!.reserved).toBe('5.00');
    } finally {
      if (held.isInTransaction()) await held.rollback();
      await wide.close();
    }
  });

  it('refunds in full when asked with no body at all, as capture and void may be asked', async () => {
    const payment = await pay(paymentBody('4242424242424242', { amount: 1999 }));
    const response = await fetch(`${app.baseUrl}/payments/${payment.body.id}/refund`, { method: 'POST', headers: { authorization: `Bearer ${tenant.apiKey}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ object: 'refund', status: 'succeeded', amount: 1999 });
  });

  it("takes an empty body sent as JSON (a client's default header) as no body on a capture and a void, never as a full refund", async () => {
    const asJson = (path: string) =>
      fetch(`${app.baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' } });
    const held = await pay(paymentBody('4242424242424242', { amount: 1999, capture: false }));
    expect(held.body.status).toBe('requires_capture');
    const captured = await asJson(`/payments/${held.body.id}/capture`);
    expect(captured.status).toBe(200);
    expect(await captured.json()).toMatchObject({ id: held.body.id, status: 'succeeded' });
    const another = await pay(paymentBody('4242424242424242', { amount: 1999, capture: false }));
    const voided = await asJson(`/payments/${another.body.id}/void`);
    expect(voided.status).toBe(200);
    expect(await voided.json()).toMatchObject({ id: another.body.id, status: 'canceled' });

    // A refund's body carries its amount: an empty one is a body lost on the way, refused, and nothing is refunded.
    const refund = await asJson(`/payments/${held.body.id}/refund`);
    expect(refund.status).toBe(400);
    expect(await refund.json()).toEqual({ error: { type: 'invalid_request_error', code: 'invalid_json', message: 'The body is not valid JSON' } });
    expect((await get(`/payments/${held.body.id}`)).body).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
    const noPayment = await asJson('/payments');
    expect(noPayment.status).toBe(400);
    expect(await noPayment.json()).toEqual({ error: { type: 'invalid_request_error', code: 'invalid_json', message: 'The body is not valid JSON' } });
  });

  it('refuses a JSON null body as it refuses any body that is no object, refunding nothing (only no body at all is a full refund)', async () => {
    const payment = await pay(paymentBody('4242424242424242', { amount: 1999 }));
    for (const text of ['null', '[]', '"x"']) {
      const refused = await refund(payment.body.id, text);
      expect(refused, text).toEqual({ status: 400, body: { error: { type: 'invalid_request_error', code: 'parameter_invalid', message: 'body must be object' } } });
    }
    expect((await get(`/payments/${payment.body.id}`)).body).toMatchObject({ status: 'succeeded', amount_refunded: 0, amount_refundable: 1999, refunded: false });
    expect((await get(`/payments/${payment.body.id}/refunds`)).body).toEqual({ object: 'list', url: `/payments/${payment.body.id}/refunds`, has_more: false, data: [] });
  });

  it('asks the processor what became of a refund whose answer was lost, and refunds once', async () => {
    // The sandbox answers amounts ending in .98 after 2.5 s, beyond the 1 s processor timeout of the tests.
    const payment = await pay(paymentBody('4242424242424242', { amount: 1098 }));
    expect(payment.body.status).toBe('succeeded');
    const slow = await refund(payment.body.id, { amount: 598 });
    expect(slow.body).toMatchObject({ status: 'succeeded', amount: 598 });
    const rows = await transactionsOf(payment.body.id);
    const refundRow = rows.find((row) => row.kind === 'refund') as TransactionRow & { gateway_response: { httpStatus: number; response: string }; sent_at: Date; completed_at: Date };
    // Its `sent` is when it went out, not when the inquiry's answer was recorded (after the 1 s timeout, or later).
    const [sentAt, completedAt] = [new Date(refundRow.sent_at).getTime(), new Date(refundRow.completed_at).getTime()];
    expect(completedAt - sentAt).toBeGreaterThanOrEqual(1_000);
    // Recorded from the inquiry's answer (GET /v1/refunds/:reference), not from a second refund.
    expect(refundRow.gateway_response.httpStatus).toBe(200);
    expect(JSON.parse(refundRow.gateway_response.response)).toMatchObject({ reference: slow.body.id, status: 'refunded', amount: '5.98' });
    // The processor holds one refund of 5.98: the remaining 5.00 is all it still accepts.
    expect((await refund(payment.body.id, { amount: 500 })).body).toMatchObject({ status: 'succeeded' });
  });

  it('answers a repeated Idempotency-Key with the same refund; another amount is a conflict', async () => {
    const payment = await pay(paymentBody('4242424242424242', { amount: 1000 }));
    const key = `refund-${Date.now()}`;
    const first = await refund(payment.body.id, { amount: 400 }, { 'Idempotency-Key': key });
    const again = await refund(payment.body.id, { amount: 400 }, { 'Idempotency-Key': key });
    expect(again.body).toEqual(first.body);
    const other = await refund(payment.body.id, { amount: 300 }, { 'Idempotency-Key': key });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    expect((await get(`/payments/${payment.body.id}`)).body).toMatchObject({ amount_refunded: 400 });
  });

  it('refuses to refund a declined payment, an unknown payment and a bad amount, changing nothing', async () => {
    const declined = await pay(paymentBody('4000000000000002'));
    expect(await refund(declined.body.id)).toMatchObject({ status: 400, body: { error: { code: 'payment_not_refundable' } } });
    expect((await refund('pay_999999999')).status).toBe(404);
    const payment = await pay(paymentBody('4242424242424242'));
    const zero = await refund(payment.body.id, { amount: 0 });
    expect(zero.status).toBe(400);
    expect(zero.body.error).toMatchObject({ type: 'invalid_request_error', param: 'amount' });
    expect((await get(`/payments/${payment.body.id}`)).body).toMatchObject({ amount_refunded: 0, amount_refundable: 1999 });
  });

  it('sends a signed transaction webhook for the refund, referring to the original', async () => {
    const secret = generateWebhookSecret();
    const receiver = await startWebhookReceiver(secret, () => ({ status: 200 }));
    try {
      const hooked = await createPaymentsApiTenant(app);
      await provision(
        { em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor: 'test' },
        parseFixture({ tenants: [{ slug: hooked.result.slug, name: 'Hooked', clientId: hooked.clientId, webhookEndpoints: [{ slug: 'tx', url: receiver.url, secret }] }] }),
      );
      const payment = await pay(paymentBody('4242424242424242'), hooked);
      const done = await refund(payment.body.id, { amount: 999 }, {}, hooked);
      expect(done.body.status).toBe('succeeded');
      await vi.waitFor(() => expect(receiver.received.filter((r) => (r.payload as { data: { kind?: string } }).data.kind === 'refund')).toHaveLength(1), { timeout: 10_000, interval: 50 });
      const hook = receiver.received.find((r) => (r.payload as { data: { kind?: string } }).data.kind === 'refund')!;
      expect(hook.verified).toBe(true);
      expect(hook.payload).toMatchObject({
        type: 'transaction.completed',
        // Amounts are JSON numbers, as in the payment's own transaction.completed.
        data: { kind: 'refund', refundId: done.body.id, paymentId: payment.body.id, success: true, amount: 9.99, refundedAmount: 9.99, currency: 'USD', transactionId: done.body.transaction_id, originalTransactionId: payment.body.transaction_id, refundable: true, last4: '4242' },
      });

      // Refunds settling close together each tell the total their own settlement left, never a later one.
      const more = await Promise.all([0, 1, 2, 3].map(() => refund(payment.body.id, { amount: 100 }, {}, hooked)));
      expect(more.map((answer) => answer.body.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
      const refundEvents = () => receiver.received.map((r) => (r.payload as { data: { kind?: string; refundedAmount: number; refundable: boolean } }).data).filter((data) => data.kind === 'refund');
      await vi.waitFor(() => expect(refundEvents()).toHaveLength(5), { timeout: 10_000, interval: 50 });
      expect(refundEvents().map((data) => data.refundedAmount).sort((a, b) => a - b)).toEqual([9.99, 10.99, 11.99, 12.99, 13.99]);
      expect((await call(app, 'GET', `/payments/${payment.body.id}`, hooked.apiKey)).body).toMatchObject({ amount_refunded: 1399 });
    } finally {
      await receiver.close();
    }
  });
});
