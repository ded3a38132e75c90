import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TEMPORAL_OUTAGE_MESSAGE } from '../api/http/outages.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createMerchantTenant, merchantAccount, oneOffProduct, post, submitBody, type MerchantTenant } from './support/payments.ts';
import { call, paymentBody } from './support/payments-api.ts';
import { startTcpCut } from './support/tcp-cut.ts';
import { createEmailTenant, postEmail, newRecipient } from './support/smtp-email.ts';
import { bearer, createEbookShop, newSessionId, postLead } from './support/leads.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';

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
  app = await startTestApp({ TEMPORAL_ADDRESS: link.address, SUBMIT_ANSWER_TIMEOUT_MS: '50000', TEMPORAL_CALL_TIMEOUT_MS: '2000' }, { hostWorker: true });
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

describe('Temporal silent (it takes connections and answers nothing)', () => {
  it('answers an e-mail 503 rather than holding it, sends it once asked again, and writes a paid lead without waiting', async () => {
    const mailer = await createEmailTenant(app);
    const email = { tenant_key: mailer.tenantKey, from: `orders@${mailer.domain}`, to: newRecipient(), subject: 'Frozen', templateType: 'string', templateContent: '<p>x</p>', idempotencyKey: `frozen-${randomUUID()}` };
    const { shop, productId } = await createEbookShop(app, 'FROZEN');
    // The session paid before its lead is written: the write marks it paid and records its customer_lead.paid.
    const sessionId = newSessionId();
    const paid = await post(app, `/api/${productId}`, shop.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
    expect(paid.body.info).toBe('Success');
    await app.temporal.client.workflow.getHandle(workflowIds.payment(shop.id, paid.body.submitOrderId)).result();

    link.freeze();
    try {
      // The e-mail is answered once its start's deadline (TEMPORAL_CALL_TIMEOUT_MS, 2 s here) has passed, never held
      // until Temporal speaks; the lead's write, sent with it, does not wait for its webhook's start at all.
      const answered: string[] = [];
      const [refused, written] = await Promise.all([
        postEmail(app, '/api/email', email).finally(() => answered.push('email')),
        postLead(app.baseUrl, { email: 'frozen@example.com', session_id: sessionId }, bearer(shop.keys.test.secretKey)).finally(() => answered.push('lead')),
      ]);
      expect(refused).toMatchObject({ status: 503, body: { success: false, error: 'Server error' } });
      expect(answered).toEqual(['lead', 'email']);
      expect(written.status).toBe(201);
      expect(written.body.data).toMatchObject({ status: 'paid' });
      const recorded = await app.orm.em.fork().execute(`select id from webhook_deliveries where tenant_id = ? and event_type = 'customer_lead.paid'`, [shop.id]);
      expect(recorded).toHaveLength(1);
    } finally {
      await link.restore();
    }
    // The same key once Temporal answers: accepted, its e-mail stored once.
    const accepted = await postEmail(app, '/api/email', email);
    expect(accepted.status).toBe(200);
    const stored = await app.orm.em.fork().execute(`select id from emails where tenant_id = ? and subject = 'Frozen'`, [mailer.id]);
    expect(stored).toHaveLength(1);
  }, 90_000);
});
