import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { bearer, createLeadTenant, getLeads, newSessionId, postLead } from './support/leads.ts';
import { merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';
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

it('a successful submit marks the lead of its partnerSession paid and fires one signed customer_lead.paid; a second payment changes nothing', async () => {
  const secret = generateWebhookSecret();
  const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
  try {
    const tenant = await createLeadTenant(app, {
      extra: {
        products: [oneOffProduct('ebook', '19.99')],
        merchantAccounts: [merchantAccount(`LEADWF-${randomUUID().slice(0, 8)}`)],
        webhookEndpoints: [{ slug: 'leads', url: receiver.url, secret, eventTypes: ['customer_lead.paid'] }],
      },
    });
    const productId = tenant.result.products[0]!.id;
    const sessionId = newSessionId();
    const lead = await postLead(app.baseUrl, { email: 'buyer@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey));
    expect(lead.status).toBe(201);

    const first = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
    expect(first.body.info).toBe('Success');
    // The marking runs after the answer: the payment workflow's end is when it is done.
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
