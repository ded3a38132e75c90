import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TEMPORAL_OUTAGE_MESSAGE } from '../api/http/outages.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createMerchantTenant, merchantAccount, oneOffProduct, post, submitBody, type MerchantTenant } from './support/payments.ts';
import { call, paymentBody } from './support/payments-api.ts';
import { startTcpCut } from './support/tcp-cut.ts';

/**
 * Temporal going away while the gateway answers: what was asked may have reached it, so the caller is told 503 with
 * `Retry-After`, never a bare 500 (a merchant told 500 for a payment that went through might send it again without
 * its key), and a retry with the same Idempotency-Key once Temporal is back gets the outcome.
 */
let link: Awaited<ReturnType<typeof startTcpCut>>;
let app: TestApp;
let tenant: MerchantTenant;

beforeAll(async () => {
  link = await startTcpCut(inject('temporalAddress'));
  // The product's default shape: the gateway hosts a worker and starts payments eagerly over its native connection.
  app = await startTestApp({ TEMPORAL_ADDRESS: link.address, SUBMIT_ANSWER_TIMEOUT_MS: '50000' }, { hostWorker: true });
  await app.startWorker();
  tenant = await createMerchantTenant(app, {
    products: [
      oneOffProduct('payments-api', '0.00'),
      oneOffProduct('checkout', '12.00'),
      oneOffProduct('plan', '9.99', 'USD', { subscriptionPlan: { recurringAmount: '4.99', intervalDays: 30, gracePeriodDays: 3 } }),
    ],
    merchantAccounts: [merchantAccount('OUT-1', { monthlyCap: 1_000_000 })],
  });
});
afterAll(async () => {
  await link?.restore().catch(() => undefined);
  await app?.close();
  await link?.close();
});

describe('Temporal unreachable', () => {
  it('answers 503 on the submit, /payments, a capture and a cancel; the same keys get their outcome once it is back', async () => {
    const held = await call(app, 'POST', '/payments', tenant.apiKey, paymentBody('4242424242424242', { capture: false }));
    expect(held.body.status).toBe('requires_capture');
    const subscribed = await post(app, `/api/${tenant.products.plan}`, tenant.apiKey, submitBody('4242424242424242'));
    expect(subscribed.body).toMatchObject({ info: 'Success', subscribeSuccess: true });

    await link.cut();
    const keys = { submit: `outage-${randomUUID()}`, payment: `outage-${randomUUID()}`, capture: `outage-${randomUUID()}`, cancel: `outage-${randomUUID()}` };
    const bodies = { submit: submitBody('4242424242424242'), payment: paymentBody('4242424242424242') };
    const ask = {
      submit: () => post(app, `/api/${tenant.products.checkout}`, tenant.apiKey, bodies.submit, { 'idempotency-key': keys.submit }),
      payment: () => call(app, 'POST', '/payments', tenant.apiKey, bodies.payment, { 'Idempotency-Key': keys.payment }),
      capture: () => call(app, 'POST', `/payments/${held.body.id}/capture`, tenant.apiKey, undefined, { 'Idempotency-Key': keys.capture }),
      cancel: () => call(app, 'POST', `/subscriptions/${subscribed.body.subscriptionId}/cancel`, tenant.apiKey, undefined, { 'Idempotency-Key': keys.cancel }),
    };
    const [submit, payment, capture, cancel] = await Promise.all([ask.submit(), ask.payment(), ask.capture(), ask.cancel()]);
    expect(submit).toMatchObject({ status: 503, body: { success: false, message: TEMPORAL_OUTAGE_MESSAGE } });
    expect(payment).toMatchObject({ status: 503, body: { error: { type: 'api_error', code: 'still_processing', message: TEMPORAL_OUTAGE_MESSAGE } } });
    expect(capture).toMatchObject({ status: 503, body: { error: { type: 'api_error', code: 'still_processing', message: TEMPORAL_OUTAGE_MESSAGE } } });
    expect(cancel).toMatchObject({ status: 503, body: { error: { type: 'api_error', code: 'still_processing', message: TEMPORAL_OUTAGE_MESSAGE } } });

    await link.restore();
    // A submit's key whose payment may or may not have started is in progress (409) until its claim is 30 s old.
    let retried = await ask.submit();
    for (let tries = 0; retried.status === 409 && tries < 45; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      retried = await ask.submit();
    }
    expect(retried.body).toMatchObject({ info: 'Success', chargeSuccess: true });
    expect((await ask.payment()).body).toMatchObject({ status: 'succeeded' });
    expect((await ask.capture()).body).toMatchObject({ id: held.body.id, status: 'succeeded' });
    expect((await ask.cancel()).body).toMatchObject({ id: subscribed.body.subscriptionId, status: 'cancelled' });
  }, 120_000);
});
