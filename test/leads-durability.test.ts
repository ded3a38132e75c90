import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { bearer, createLeadTenant, getLeads, newSessionId, postLead } from './support/leads.ts';
import { merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';

/**
 * The paid marking runs in the payment workflow's background phase. A worker that dies after the transaction is
 * recorded but before the lead is marked must not lose the marking: the next worker replays the workflow and
 * finishes it.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

it('a worker killed after the transaction is recorded and before the lead is marked: the lead still ends paid', async () => {
  const tenant = await createLeadTenant(app, {
    extra: { products: [oneOffProduct('ebook', '19.99')], merchantAccounts: [merchantAccount(`LEADKILL-${randomUUID().slice(0, 8)}`)] },
  });
  const productId = tenant.result.products[0]!.id;
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
    await vi.waitFor(
      async () => {
        const waiting = await app.orm.em.fork().execute(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%update customer_leads%'`);
        expect(waiting, 'the marking waits on the lead row').toHaveLength(1);
      },
      { timeout: 30_000, interval: 50 },
    );
    first.kill('SIGKILL');
  });
  const lead = async () => (await getLeads(app.baseUrl, { session_id: sessionId }, bearer(tenant.keys.test.secretKey))).body.data[0];
  expect((await lead()).status).toBe('lead');

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
}, 120_000);
