import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { bearer, createLeadTenant, getLeads, newSessionId, postLead } from './support/leads.ts';
import { localActivitiesOf, merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';

/** The whole path: a checkout's lead, a successful card submit with its session as partnerSession, the webhook. */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: '0,1' }, { hostWorker: true });
  await app.startWorker();
});
afterAll(async () => {
  await app?.close();
});

/** A tenant selling one e-book on a sandbox MID of its own, its webhooks (when given) sent to `receiver`. */
async function ebookShop(mid: string, webhooks?: { url: string; secret: string; eventTypes: string[] }) {
  const tenant = await createLeadTenant(app, {
    extra: {
      products: [oneOffProduct('ebook', '19.99')],
      merchantAccounts: [merchantAccount(`${mid}-${randomUUID().slice(0, 8)}`)],
      ...(webhooks ? { webhookEndpoints: [{ slug: 'leads', ...webhooks }] } : {}),
    },
  });
  return { tenant, productId: tenant.result.products[0]!.id };
}

it('a successful submit marks the lead of its partnerSession paid and fires one signed customer_lead.paid; a second payment changes nothing', async () => {
  const secret = generateWebhookSecret();
  const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
  try {
    const { tenant, productId } = await ebookShop('LEADWF', { url: receiver.url, secret, eventTypes: ['customer_lead.paid'] });
    const sessionId = newSessionId();
    const lead = await postLead(app.baseUrl, { email: 'buyer@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey));
    expect(lead.status).toBe(201);

    const first = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
    expect(first.body.info).toBe('Success');
    // The marking is recorded by the payment's first step (or after its answer, should that fail): done when the workflow ends.
    await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, first.body.submitOrderId)).result();
    const [paid] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(paid).toMatchObject({ status: 'paid', transaction_id: first.body.transactionId, order_id: first.body.orderId, amount: '19.99', currency: 'USD' });

    const deliveries = await app.orm.em.fork().getConnection().execute<{ id: string }[]>(
      `select id from webhook_deliveries where tenant_id = ? and event_type = 'customer_lead.paid'`,
      [tenant.id],
    );
    expect(deliveries).toHaveLength(1);
    expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveries[0]!.id)).result()).toBe('delivered');
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.verified).toBe(true);
    expect(receiver.received[0]!.payload).toMatchObject({ type: 'customer_lead.paid', data: paid });

    const second = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
    expect(second.body.info).toBe('Success');
    await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, second.body.submitOrderId)).result();
    const [still] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(still).toEqual(paid);
    const after = await app.orm.em.fork().getConnection().execute(`select id from webhook_deliveries where tenant_id = ? and event_type = 'customer_lead.paid'`, [tenant.id]);
    expect(after).toHaveLength(1);
  } finally {
    await receiver.close();
  }
});

it("a lead row another transaction holds does not hold the answer back: the first step leaves the marking to a step after the answer, which marks it once the row is free", async () => {
  const secret = generateWebhookSecret();
  const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
  const locker = app.orm.em.fork();
  try {
    const { tenant, productId } = await ebookShop('LEADLOCK', { url: receiver.url, secret, eventTypes: ['customer_lead.paid', 'transaction.completed'] });
    const sessionId = newSessionId();
    expect((await postLead(app.baseUrl, { email: 'held@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey))).status).toBe(201);
    await locker.begin();
    expect(await locker.execute(`select id from customer_leads where tenant_id = ? and session_id = ? for update`, [tenant.id, sessionId])).toHaveLength(1);

    const answer = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
    expect(answer.body).toMatchObject({ info: 'Success', chargeSuccess: true });
    const [unpaid] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(unpaid, 'answered while the row was still held').toMatchObject({ status: expect.not.stringMatching(/^paid$/) });
    await locker.rollback();

    // The first step did not wait for the row (it would have timed out and gone on step by step): one step, then the outcome.
    expect(await localActivitiesOf(app, tenant.id, answer.body.submitOrderId)).toEqual(['tryFirstAttempt', 'recordPaymentOutcome']);
    const [paid] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(paid).toMatchObject({ status: 'paid', transaction_id: answer.body.transactionId });
    const deliveries = await app.orm.em.fork().execute<{ event_type: string }[]>(`select event_type from webhook_deliveries where tenant_id = ? order by event_type`, [tenant.id]);
    expect(deliveries.map((d) => d.event_type), 'each event recorded once, though the first step recorded the transaction webhook before failing on the lead').toEqual([
      'customer_lead.paid',
      'transaction.completed',
    ]);
    await vi.waitFor(() => expect(receiver.received.map((r) => (r.payload as { type: string }).type).sort()).toEqual(['customer_lead.paid', 'transaction.completed']), { timeout: 10_000 });
  } finally {
    if (locker.isInTransaction()) await locker.rollback();
    await receiver.close();
  }
});

it('a lead first written after its session paid is paid at once, with the identifiers and webhook it would have had', async () => {
  const secret = generateWebhookSecret();
  const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
  try {
    const { tenant, productId } = await ebookShop('LEADLATE', { url: receiver.url, secret, eventTypes: ['customer_lead.paid'] });
    const sessionId = newSessionId();
    const payment = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
    expect(payment.body.info).toBe('Success');
    await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, payment.body.submitOrderId)).result();

    const late = await postLead(app.baseUrl, { email: 'late@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey));
    expect(late.status).toBe(201);
    expect(late.body.data).toMatchObject({ session_id: sessionId, status: 'paid' });
    const [paid] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(paid).toMatchObject({ status: 'paid', transaction_id: payment.body.transactionId, order_id: payment.body.orderId, amount: '19.99', currency: 'USD', subscription_id: null });
    expect(paid.paid_at).not.toBeNull();

    await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 10_000, interval: 100 });
    expect(receiver.received[0]!.verified).toBe(true);
    expect(receiver.received[0]!.payload).toMatchObject({ type: 'customer_lead.paid', data: { id: paid.id, status: 'paid', transaction_id: payment.body.transactionId } });

    // Written again, it stays as it is: paid once, one webhook.
    expect((await postLead(app.baseUrl, { email: 'late@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey))).status).toBe(200);
    const deliveries = await app.orm.em.fork().execute(`select id from webhook_deliveries where tenant_id = ? and event_type = 'customer_lead.paid'`, [tenant.id]);
    expect(deliveries).toHaveLength(1);

    // A declined payment of another session pays nothing; nor does a lead of the other environment's key.
    const declinedSession = newSessionId();
    expect((await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4000000000000002', { partnerSession: declinedSession }))).body.info).toBe('Error');
    const unpaid = await postLead(app.baseUrl, { email: 'late@example.com', session_id: declinedSession }, bearer(tenant.keys.test.secretKey));
    expect(unpaid.body.data).toMatchObject({ status: 'lead' });
    const liveSession = newSessionId();
    expect((await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: liveSession }))).body.info).toBe('Success');
    const otherEnvironment = await postLead(app.baseUrl, { email: 'late@example.com', session_id: liveSession }, bearer(tenant.keys.live.secretKey));
    expect(otherEnvironment.body.data).toMatchObject({ status: 'lead' });
  } finally {
    await receiver.close();
  }
});

it("a browser's first write after its session paid: paid within 15 minutes of the charge, answered as written; later it pays nothing", async () => {
  const secret = generateWebhookSecret();
  const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
  const origin = 'https://shop.example';
  try {
    const tenant = await createLeadTenant(app, {
      origins: [origin],
      extra: {
        products: [oneOffProduct('ebook', '19.99')],
        merchantAccounts: [merchantAccount(`LEADPK-${randomUUID().slice(0, 8)}`)],
        webhookEndpoints: [{ slug: 'leads', url: receiver.url, secret, eventTypes: ['customer_lead.paid'] }],
      },
    });
    const productId = tenant.result.products[0]!.id;
    const browser = { 'x-service-lead-key': tenant.keys.test.publishableKey, origin };
    const paidSession = async () => {
      const sessionId = newSessionId();
      const payment = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
      expect(payment.body.info).toBe('Success');
      await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, payment.body.submitOrderId)).result();
      return { sessionId, transactionId: payment.body.transactionId as string };
    };

    // Right after the charge: the lead is paid and told, but the public key's answer says only what it wrote.
    const recent = await paidSession();
    const written = await postLead(app.baseUrl, { email: 'late@example.com', session_id: recent.sessionId }, browser);
    expect(written.status).toBe(201);
    expect(written.body.data).toMatchObject({ session_id: recent.sessionId, status: 'lead' });
    const [paid] = (await getLeads(app.baseUrl, { session_id: recent.sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(paid).toMatchObject({ status: 'paid', transaction_id: recent.transactionId });
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 10_000, interval: 100 });

    // A session charged 16 minutes ago: a browser write cannot attach itself to that payment any more.
    const old = await paidSession();
    await app.orm.em.fork().execute(
      `update transactions set completed_at = completed_at - interval '16 minutes', sent_at = sent_at - interval '16 minutes'
        where tenant_id = ? and gateway_transaction_id = ?`,
      [tenant.id, old.transactionId],
    );
    const stranger = await postLead(app.baseUrl, { email: 'attacker@example.com', session_id: old.sessionId }, browser);
    expect(stranger.status).toBe(201);
    expect(stranger.body.data).toMatchObject({ status: 'lead' });
    const [unpaid] = (await getLeads(app.baseUrl, { session_id: old.sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(unpaid).toMatchObject({ status: 'lead', transaction_id: null });
    const deliveries = await app.orm.em.fork().execute(`select id from webhook_deliveries where tenant_id = ? and event_type = 'customer_lead.paid'`, [tenant.id]);
    expect(deliveries, 'only the recent session was told').toHaveLength(1);

    // The merchant's server, with its secret key, still pays it.
    const server = await postLead(app.baseUrl, { email: 'buyer@example.com', session_id: old.sessionId }, bearer(tenant.keys.test.secretKey));
    expect(server.body.data).toMatchObject({ status: 'paid' });
  } finally {
    await receiver.close();
  }
});

it('pays every lead once when each lead is written while its session pays, at once', async () => {
  const { tenant, productId } = await ebookShop('LEADRACE');
  const sessions = Array.from({ length: 12 }, () => newSessionId());
  const raced = await Promise.all(
    sessions.map(async (sessionId, index) => {
      // The lead's write a little before, with or a little after its payment.
      const lead = new Promise((resolve) => setTimeout(resolve, (index % 4) * 50)).then(() =>
        postLead(app.baseUrl, { email: `race-${index}@example.com`, session_id: sessionId }, bearer(tenant.keys.test.secretKey)),
      );
      const payment = post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
      const [written, paid] = await Promise.all([lead, payment]);
      expect(written.status).toBe(201);
      expect(paid.body.info).toBe('Success');
      return paid.body;
    }),
  );
  for (const payment of raced) await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, payment.submitOrderId)).result();
  const leads = (await getLeads(app.baseUrl, { limit: '100' }, bearer(tenant.keys.test.secretKey))).body.data as { session_id: string; status: string; transaction_id: string }[];
  expect(leads).toHaveLength(12);
  for (const [index, sessionId] of sessions.entries()) {
    expect(leads.find((lead) => lead.session_id === sessionId)).toMatchObject({ status: 'paid', transaction_id: raced[index]!.transactionId });
  }
});

it('pays a lead left unpaid though its session paid (its marking given up) the next time the lead is written', async () => {
  const { tenant, productId } = await ebookShop('LEADAGAIN');
  const sessionId = newSessionId();
  expect((await postLead(app.baseUrl, { email: 'again@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey))).status).toBe(201);
  const payment = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
  await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, payment.body.submitOrderId)).result();
  // As if both of the payment's markings had failed for good (logged, never undoing the payment).
  await app.orm.em.fork().execute(
    `update customer_leads set status = 'lead', transaction_id = null, order_id = null, amount = null, currency = null, subscription_id = null, paid_at = null where tenant_id = ? and session_id = ?`,
    [tenant.id, sessionId],
  );
  const written = await postLead(app.baseUrl, { email: 'again@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey));
  expect(written.status).toBe(200);
  expect(written.body.data).toMatchObject({ status: 'paid' });
  const [lead] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
  expect(lead).toMatchObject({ status: 'paid', transaction_id: payment.body.transactionId, order_id: payment.body.orderId });
  expect(written.body.data.updated_at).toBe(lead.updated_at);
});
