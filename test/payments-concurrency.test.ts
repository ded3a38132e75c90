import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentOrderActivities } from '../activities/payments/payment-order.activities.ts';
import { reserveOrderId } from '../data/queries/orders.ts';
import { insertSubscriptionOfSubmitOrder } from '../data/queries/subscriptions.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createMerchantTenant, createPaymentTenant, merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';

/**
 * Money under concurrency (docs/invariants.md): many submits at once must not pass a MID's monthly cap,
 * subscribe one e-mail twice, or let more submits of one card through than its velocity limit; and a
 * settlement that runs twice must not create two subscriptions. Each test fires the requests together.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
});
afterAll(() => app?.close());

const APPROVED = '4242424242424242';
const DECLINED = '4000000000000002';

/** Runs every request at once and answers their results in order. */
function all<T>(count: number, request: (index: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => request(index)));
}

describe('monthlyCap', () => {
  it('never approves past the cap, however many slow payments are in flight on the MID at once', async () => {
    // .98: the processor's first answer is late, so every payment is still in flight while the others select.
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('slow', '19.98')],
      merchantAccounts: [merchantAccount('CAPPED', { monthlyCap: 60 })],
    });
    const results = await all(20, async () => (await post(app, `/api/${tenant.products.slow}`, tenant.apiKey, submitBody(APPROVED))).body);

    const approved = results.filter((result) => result.chargeSuccess);
    // 3 × 19.98 = 59.94 fits within 60; a fourth would not.
    expect(approved).toHaveLength(3);
    expect(results.filter((result) => result.info === 'None')).toHaveLength(17);
    const charged = await all(results.length, (index) => (results[index]!.submitOrderId > 0 ? authorizationsFor(results[index]!.submitOrderId) : Promise.resolve(0)));
    expect(charged.reduce((sum, count) => sum + count, 0)).toBe(3);

    const [volume] = await app.orm.em.fork().execute(
      `select v.approved_amount, v.reserved_amount from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.mid = ?`,
      [tenant.mids.CAPPED],
    );
    // Every reservation ended: converted by an approval or released.
    expect(volume).toEqual({ approved_amount: '59.94', reserved_amount: '0.00' });
  });
});

describe('one live subscription per e-mail and product', () => {
  it('charges and subscribes once when one e-mail submits five times at once; the others are AlreadySubscribed', async () => {
    const tenant = await createPaymentTenant(app);
    const email = `subscriber-${randomUUID().slice(0, 8)}@example.com`;
    // The same address in other cases is the same subscriber.
    const spellings = [email, email.toUpperCase(), email, `Subscriber${email.slice('subscriber'.length)}`, email];
    const results = await all(5, async (index) => (await post(app, `/api/${tenant.planProductId}`, tenant.apiKey, { ...submitBody(APPROVED), email: spellings[index] })).body);

    expect(results.filter((result) => result.info === 'Success' && result.subscribeSuccess && result.chargeSuccess)).toHaveLength(1);
    expect(results.filter((result) => result.info === 'AlreadySubscribed')).toHaveLength(4);
    for (const loser of results.filter((result) => result.info === 'AlreadySubscribed')) {
      expect(loser).toMatchObject({ chargeSuccess: false, subscribeSuccess: false, subscriptionId: 0, statusId: 0, transactionId: '', gatewayResponses: [] });
    }
    const charged = await all(results.length, (index) => (results[index]!.submitOrderId > 0 ? authorizationsFor(results[index]!.submitOrderId) : Promise.resolve(0)));
    expect(charged.reduce((sum, count) => sum + count, 0)).toBe(1);
    const subscriptions = await app.orm.em.fork().execute(`select state from subscriptions where product_id = ? and lower(email) = ?`, [tenant.planProductId, email]);
    expect(subscriptions).toEqual([{ state: 'active' }]);
  });

  it('gives the claim back when the charge fails without salvage, so the e-mail can subscribe again', async () => {
    const tenant = await createPaymentTenant(app);
    const email = `retry-${randomUUID().slice(0, 8)}@example.com`;
    const declined = await post(app, `/api/${tenant.planProductId}`, tenant.apiKey, { ...submitBody(DECLINED), email });
    expect(declined.body).toMatchObject({ info: 'Error', statusId: 3617, subscribeSuccess: false, subscriptionId: 0 });
    const approved = await post(app, `/api/${tenant.planProductId}`, tenant.apiKey, { ...submitBody(APPROVED), email });
    expect(approved.body).toMatchObject({ info: 'Success', subscribeSuccess: true, chargeSuccess: true });
  });
});

describe('velocity', () => {
  it('lets exactly the card limit through to the processor when one card is submitted ten times at once', async () => {
    const tenant = await createPaymentTenant(app, { cardSubmitLimit: 3 });
    const results = await all(10, async () => (await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody(APPROVED))).body);

    const limited = results.filter((result) => result.info === 'LimitReached');
    expect(limited).toHaveLength(7);
    for (const result of limited) expect(result).toMatchObject({ error: 'CC entered too many times in quick succession', statusId: 0, submitOrderId: 0 });
    const processed = results.filter((result) => result.submitOrderId > 0);
    expect(processed.map((result) => result.info)).toEqual(['Success', 'Success', 'Success']);
    const charged = await all(processed.length, (index) => authorizationsFor(processed[index]!.submitOrderId));
    expect(charged).toEqual([1, 1, 1]);
  });
});

describe('one cap reservation per submit order', () => {
  it('reserves the amount once when the reservation of one order runs eight times at once (a step run again while its first run commits)', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('once', '25.00')], merchantAccounts: [merchantAccount('ONCE')] });
    const activities = createPaymentOrderActivities({ orm: app.orm });
    const submitOrderId = await reserveOrderId(app.orm.em.fork());
    const opened = await activities.openPaymentOrder({
      tenantId: tenant.id,
      productId: tenant.products.once!,
      submitOrderId,
      workflowId: `test/${submitOrderId}`,
      email: `once-${randomUUID().slice(0, 8)}@example.com`,
      amount: '25.00',
      currency: 'USD',
      order: { mobileWalletA: false, partnerSession: `ps-${submitOrderId}` },
    });
    expect(opened).toEqual({ alreadySubscribed: false, created: true });

    const request = { tenantId: tenant.id, submitOrderId, amount: '25.00', currency: 'USD', network: 'NetworkA', triedMerchantAccountIds: [] };
    const choices = await all(8, () => activities.reserveMerchantAccount(request));
    expect(new Set(choices.map((choice) => choice.account?.mid))).toEqual(new Set(Object.values(tenant.mids)));
    const [volume] = await app.orm.em.fork().execute(
      `select v.reserved_amount from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.tenant_id = ?`,
      [tenant.id],
    );
    expect(volume).toEqual({ reserved_amount: '25.00' });
  });
});

describe('one subscription per submit order', () => {
  it('creates one subscription and one subscription order when opening and settlement each run twice at once', async () => {
    const tenant = await createPaymentTenant(app);
    const activities = createPaymentOrderActivities({ orm: app.orm });
    const submitOrderId = await reserveOrderId(app.orm.em.fork());
    const email = `twice-${randomUUID().slice(0, 8)}@example.com`;
    const opening = {
      tenantId: tenant.id,
      productId: tenant.planProductId,
      submitOrderId,
      workflowId: `test/${submitOrderId}`,
      email,
      amount: '29.99',
      currency: 'USD',
      order: { mobileWalletA: false, partnerSession: `ps-${submitOrderId}` },
      subscription: { recurringAmount: '29.99' },
    };
    // A local activity may run again while (or after) its first run commits.
    const opened = await all(2, () => activities.openPaymentOrder(opening));
    expect(opened.map((order) => order.alreadySubscribed)).toEqual([false, false]);
    expect(opened.filter((order) => order.created), 'one of the two runs created the order').toHaveLength(1);

    const settlement = {
      tenantId: tenant.id,
      productId: tenant.planProductId,
      submitOrderId,
      email,
      state: 'approved' as const,
      subscription: { state: 'active' as const, recurringAmount: '29.99', intervalDays: 30, trialDays: 0, gracePeriodDays: 3 },
    };
    const [first, second] = await all(2, () => activities.settlePaymentOrder(settlement));
    expect(second).toEqual(first);
    expect(first!.subscriptionId).toBeGreaterThan(0);

    const em = app.orm.em.fork();
    const subscriptionOrders = await em.execute(`select id, state from orders where parent_order_id = ? and kind = 'subscription'`, [submitOrderId]);
    expect(subscriptionOrders).toEqual([{ id: first!.orderId, state: 'approved' }]);
    const subscriptions = await em.execute(`select id, state from subscriptions where order_id = ?`, [first!.orderId]);
    expect(subscriptions).toEqual([{ id: first!.subscriptionId, state: 'active' }]);

    // The database itself refuses a second subscription order for the submit, whatever the caller checked.
    const another = em.transactional((tx) =>
      insertSubscriptionOfSubmitOrder(tx, {
        submitOrderId, email: `other-${email}`, state: 'active', orderState: 'approved', recurringAmount: '29.99', nextBillingInDays: 30, graceUntil: null,
      }),
    );
    await expect(another).rejects.toThrow(/orders_one_subscription_order_per_submit/);
  });
});
