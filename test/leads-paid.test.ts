import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openOrm } from '../data/orm.ts';
import { markLeadPaidIfUnpaid } from '../data/queries/leads.ts';
import { createLeadActivities, createPaidLeadMarker } from '../activities/leads/lead-paid.activities.ts';
import type { PaidLead } from '../domain/payments/payment-outcome.ts';
import { temporalDeliveryStarter } from '../adapters/temporal/webhook-delivery-starter.ts';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { bearer, createLeadTenant, getLeads, newSessionId, postLead, type LeadTenant } from './support/leads.ts';
import { merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';
import { waitForLockWaiters } from './support/lock-waiters.ts';

/**
 * The paid marking itself (activity `markLeadPaid`), driven by real payments: the payment workflow calls it after
 * a successful charge (test/leads-paid-workflow.test.ts covers that path end to end).
 */
let app: TestApp;
let tenant: LeadTenant;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let productId: number;
const SCHEDULE = [0, 1];

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(',') });
  await app.startWorker();
  const secret = generateWebhookSecret();
  receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
  tenant = await createLeadTenant(app, {
    extra: {
      products: [oneOffProduct('ebook', '19.99')],
      merchantAccounts: [merchantAccount(`LEAD-${randomUUID().slice(0, 8)}`)],
      webhookEndpoints: [{ slug: 'leads', url: receiver.url, secret, eventTypes: ['customer_lead.paid'] }],
    },
  });
  productId = tenant.result.products[0]!.id;
});
afterAll(async () => {
  await receiver?.close();
  await app?.close();
});

/**
 * A real approved payment on the tenant's sandbox MID, as the marking would see it for this checkout session. The
 * submit itself carries no partnerSession, so the payment workflow leaves the lead alone and the test drives the
 * marking (its retries and races) by hand.
 */
async function pay(sessionId: string): Promise<PaidLead> {
  const { status, body } = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242'));
  expect(status).toBe(200);
  expect(body.info).toBe('Success');
  return {
    tenantId: tenant.id,
    productId,
    merchantAccountId: body.merchantAccountId,
    sessionId,
    transactionId: body.transactionId,
    orderId: body.orderId,
    amount: '19.99',
    currency: 'USD',
    subscriptionId: body.subscriptionId,
    paidAt: new Date().toISOString(),
  };
}

const starter = () => temporalDeliveryStarter({ client: app.temporal.client, taskQueue: app.taskQueue, schedule: SCHEDULE, attemptTimeoutMs: 5_000 });

describe('marking a lead paid', () => {
  it('marks the matching lead paid once, with the first payment, and sends one signed customer_lead.paid', async () => {
    const sessionId = newSessionId();
    const created = await postLead(app.baseUrl, { email: 'buyer@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey));
    expect(created.status).toBe(201);

    const first = await pay(sessionId);
    const activities = createLeadActivities({ orm: app.orm });
    const deliveries = await activities.markLeadPaid(first);
    expect(deliveries).toHaveLength(1);
    // A retried activity records the same delivery, not a second one.
    expect(await activities.markLeadPaid(first)).toEqual(deliveries);
    for (const delivery of deliveries) await starter().startDelivery(delivery);
    expect(await app.temporal.client.workflow.getHandle(workflowIds.webhookDelivery(deliveries[0]!.deliveryId)).result()).toBe('delivered');

    const [paid] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(paid).toMatchObject({
      id: created.body.data.id,
      status: 'paid',
      transaction_id: first.transactionId,
      order_id: first.orderId,
      amount: '19.99',
      currency: 'USD',
      subscription_id: null,
      paid_at: expect.any(String),
    });
    const received = receiver.received.filter((r) => (r.payload as { data: { id: string } }).data.id === created.body.data.id);
    expect(received).toHaveLength(1);
    expect(received[0]!.verified).toBe(true);
    expect(received[0]!.payload).toEqual({ type: 'customer_lead.paid', timestamp: paid.paid_at, data: paid });

    // A second payment of the same session neither overwrites the identifiers nor emits again.
    const second = await pay(sessionId);
    expect(await activities.markLeadPaid(second)).toEqual([]);
    const [still] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(still).toEqual(paid);
  });

  it('leaves a lead of another environment alone: a sandbox payment never pays a live lead', async () => {
    const sessionId = newSessionId();
    expect((await postLead(app.baseUrl, { email: 'live@example.com', session_id: sessionId }, bearer(tenant.keys.live.secretKey))).status).toBe(201);
    expect(await createLeadActivities({ orm: app.orm }).markLeadPaid(await pay(sessionId))).toEqual([]);
    const [lead] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.live.secretKey))).body.data;
    expect(lead.status).toBe('lead');
  });

  it('marks one lead once when the same payment is marked many times at once', async () => {
    const sessionId = newSessionId();
    expect((await postLead(app.baseUrl, { email: 'race@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey))).status).toBe(201);
    const payment = await pay(sessionId);
    const activities = createLeadActivities({ orm: app.orm });
    const results = await Promise.all(Array.from({ length: 10 }, () => activities.markLeadPaid(payment)));
    const ids = new Set(results.flat().map((d) => d.deliveryId));
    expect(ids.size).toBe(1);
    const [row] = await app.orm.em.fork().getConnection().execute<{ count: number }[]>(`select count(*)::int as count from webhook_deliveries where id = ?`, [[...ids][0]!]);
    expect(row?.count).toBe(1);
  });

  it('keeps its first payment when five more payments of the session mark it while the first has not committed', async () => {
    const sessionId = newSessionId();
    expect((await postLead(app.baseUrl, { email: 'first@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey))).status).toBe(201);
    const payments: PaidLead[] = [];
    for (let i = 0; i < 6; i++) payments.push(await pay(sessionId));
    const [first, ...later] = payments as [PaidLead, ...PaidLead[]];
    const wide = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 8 });
    const held = wide.em.fork();
    await held.begin();
    try {
      // The first payment's marking holds the lead's row until it commits; the later ones wait for it there.
      const match = { tenantId: first.tenantId, productId: first.productId, merchantAccountId: first.merchantAccountId, sessionId };
      const payment = { transactionId: first.transactionId, orderId: first.orderId, amount: first.amount, currency: first.currency, subscriptionId: null, paidAt: new Date(first.paidAt) };
      expect(await markLeadPaidIfUnpaid(held, match, payment)).toMatchObject({ status: 'paid' });
      // On a pool of their own, wide enough for all of them to wait at the row (the harness pool of 5 would queue them).
      const markPaidLead = createPaidLeadMarker({ orm: wide });
      const others = Promise.all(later.map((payment) => markPaidLead(payment)));
      await waitForLockWaiters(app.orm, 'update customer_leads l%', { count: later.length, exactly: true });
      await held.commit();
      expect(await others).toEqual(later.map(() => []));
    } finally {
      if (held.isInTransaction()) await held.rollback();
      await wide.close();
    }
    const [lead] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(lead).toMatchObject({ status: 'paid', transaction_id: first.transactionId, order_id: first.orderId });
  });

  it("without waiting for the row (a payment's first step): six payments of one session marking at once, one wins, the others refused or too late", async () => {
    const sessionId = newSessionId();
    expect((await postLead(app.baseUrl, { email: 'nowait@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey))).status).toBe(201);
    const payments: PaidLead[] = [];
    for (let i = 0; i < 6; i++) payments.push(await pay(sessionId));
    const markPaidLead = createPaidLeadMarker({ orm: app.orm });
    const results = await Promise.allSettled(payments.map((payment) => markPaidLead(payment, { waitForLock: false })));
    // A marking that met the row held by another gets lock_not_available at once; none waits, none marks twice.
    for (const result of results) if (result.status === 'rejected') expect((result.reason as { code?: string }).code).toBe('55P03');
    const [lead] = (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data;
    expect(lead.status).toBe('paid');
    const winner = payments.findIndex((payment) => payment.transactionId === lead.transaction_id);
    expect(winner).toBeGreaterThanOrEqual(0);
    const delivered = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
    expect(new Set(delivered.map((d) => d.deliveryId)).size).toBeLessThanOrEqual(1);
    // Marked again as the workflow's later step would (waiting): the winner finds its deliveries, the others nothing.
    const again = await Promise.all(payments.map((payment) => markPaidLead(payment)));
    again.forEach((deliveries, index) => expect(deliveries).toHaveLength(index === winner ? 1 : 0));
    const rows = await app.orm.em.fork().execute(`select id from webhook_deliveries where tenant_id = ? and event_type = 'customer_lead.paid' and body like ?`, [tenant.id, `%${sessionId}%`]);
    expect(rows).toHaveLength(1);
  });
});
