import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { bearer, createEbookShop, getLeads, newSessionId, postLead } from './support/leads.ts';
import { post, submitBody } from './support/payments.ts';
import { backendPidOf, waitForLockWaiters } from './support/lock-waiters.ts';

/**
 * A lead whose row is held when its payment settles is marked by the payment's step after the answer. A worker that
 * dies there, after the transaction is recorded, must not lose the marking or its webhook: the next worker replays the
 * workflow and finishes both.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

it('a worker killed after the transaction is recorded and before the lead is marked: the lead still ends paid, its webhook sent once', async () => {
  const { shop: tenant, productId, receiver } = await createEbookShop(app, 'LEADKILL');
  const sessionId = newSessionId();
  const created = await postLead(app.baseUrl, { email: 'buyer@example.com', session_id: sessionId }, bearer(tenant.keys.test.secretKey));
  expect(created.status).toBe(201);

  // Hold the lead's row so the marking waits on it: the crash then lands exactly between the two steps.
  let transactionId = '';
  await app.orm.em.fork().transactional(async (blocker) => {
    await blocker.execute(`select id from customer_leads where id = ? for update`, [created.body.data.id]);
    const first = app.spawnWorkerProcess();
    const submitted = await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242', { partnerSession: sessionId }));
    expect(submitted.body).toMatchObject({ info: 'Success', chargeSuccess: true });
    transactionId = submitted.body.transactionId;
    // The marking waits on the lead row (this test's hold: another suite's markings do not count).
    await waitForLockWaiters(app.orm, '%update customer_leads%', { count: 1, exactly: true, blockedBy: await backendPidOf(blocker), timeoutMs: 30_000 });
    first.kill('SIGKILL');
  });
  const lead = async () => (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data[0];
  const leadDeliveries = () => app.orm.em.fork().execute(`select id from webhook_deliveries where tenant_id = ? and event_type = 'customer_lead.paid'`, [tenant.id]);
  // The killed worker's marking and its deliveries are one transaction that never committed.
  expect((await lead()).status).toBe('lead');
  expect(await leadDeliveries()).toEqual([]);

  app.spawnWorkerProcess();
  const paid = await vi.waitFor(
    async () => {
      const current = await lead();
      expect(current.status).toBe('paid');
      return current;
    },
    { timeout: 60_000, interval: 200 },
  );
  expect(paid).toMatchObject({ transaction_id: transactionId, amount: '19.99', currency: 'USD' });
  const charges = await app.orm.em.fork().execute(`select count(*)::int as n from transactions where product_id = ? and success`, [productId]);
  expect(charges).toEqual([{ n: 1 }]);
  // The next worker's marking found the lead paid by this transaction and recorded its webhook: one delivery, sent.
  await vi.waitFor(() => expect(receiver.received.map((r) => (r.payload as { type: string }).type)).toEqual(['customer_lead.paid']), { timeout: 30_000, interval: 200 });
  expect(await leadDeliveries()).toHaveLength(1);
  expect(receiver.received[0]!.payload).toMatchObject({ data: { status: 'paid', transaction_id: transactionId } });
}, 120_000);
