import { randomUUID } from 'node:crypto';
import { asyncLocalStorage, type Context } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAuthorizationActivities } from '../activities/payments/authorization.activities.ts';
import { createPaymentOrderActivities } from '../activities/payments/payment-order.activities.ts';
import { recordVoid } from '../data/queries/authorization-holds.ts';
import { releaseApprovedVolume, releaseMonthlyVolume, reserveMonthlyVolume } from '../data/queries/merchant-accounts.ts';
import { closeSubmitOrder, reserveOrderId } from '../data/queries/orders.ts';
import { recordAttempt } from '../data/queries/transactions.ts';
import { openOrm } from '../data/orm.ts';
import { poolExecutor, type SqlExecutor } from '../data/sql-executor.ts';
import { attemptReference, type MerchantCandidate } from '../domain/payments/attempts.ts';
import { processorsFromConfig } from '../worker/processors-from-config.ts';
import { insertSubscriptionOfSubmitOrder } from '../data/queries/subscriptions.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createMerchantTenant, createPaymentTenant, merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';
import { waitForLockWaiters } from './support/lock-waiters.ts';

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
      // One that opened an order before it found the claim taken: the payment reads as already subscribed, not as a
      // gateway without merchant accounts.
      if (loser.submitOrderId > 0) {
        const read = await fetch(`${app.baseUrl}/payments/pay_${loser.submitOrderId}`, { headers: { authorization: tenant.apiKey } });
        expect(await read.json()).toMatchObject({ status: 'failed', failure_code: 'already_subscribed', failure_message: 'The e-mail already has a live subscription to this plan: nothing was charged' });
      }
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

describe('one customer per tenant and e-mail', () => {
  it('records one customer when ten payments of one e-mail, in mixed case, open their orders at once', async () => {
    const tenant = await createPaymentTenant(app);
    const email = `many-${randomUUID().slice(0, 8)}@example.com`;
    const emails = Array.from({ length: 10 }, (_, index) => (index % 2 ? email.toUpperCase() : email));
    const pans = ['4242424242424242', '5555555555554444', '4111111111111111', '4012888888881881', '5105105105105100'];
    const results = await all(10, (index) => post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody(pans[index % 5]!, { email: emails[index] })));
    expect(results.map((result) => result.status)).toEqual(Array(10).fill(200));
    const customers = await app.orm.em.fork().execute(`select c.id from customers c where c.tenant_id = ? and lower(c.email) = ?`, [tenant.id, email]);
    expect(customers).toHaveLength(1);
    const [{ orders }] = (await app.orm.em.fork().execute(`select count(*)::int as orders from orders where customer_id = ?`, [customers[0]!.id])) as [{ orders: number }];
    expect(orders).toBe(10);
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

describe('the first reservations of a month and currency', () => {
  it('refuses none that fit the cap while they create the volume row together (the 1st of a month, a new currency)', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('fresh', '1.00')], merchantAccounts: [merchantAccount('FRESH', { monthlyCap: 1_000_000 })] });
    const [account] = await app.orm.em.fork().execute<{ id: number }[]>(`select id from merchant_accounts where mid = ?`, [tenant.mids.FRESH]);
    const activities = createPaymentOrderActivities({ orm: app.orm });
    // Enough connections for the reservations to meet in the database, as a busy worker's would.
    const wide = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 40 });
    try {
      const sql = poolExecutor(wide);
      // Each round a currency the account has no volume row for yet; the race is short, so it is met many times.
      for (let round = 0; round < 25; round++) {
        const currency = `Z${String(round).padStart(2, '0')}`;
        const orders = await all(40, async () => {
          const submitOrderId = await reserveOrderId(app.orm.em.fork());
          const order = { mobileWalletA: false };
          await activities.openPaymentOrder({ tenantId: tenant.id, productId: tenant.products.fresh!, submitOrderId, workflowId: `test/${submitOrderId}`, email: `fresh-${submitOrderId}@example.com`, amount: '1.00', currency, order });
          return submitOrderId;
        });
        const reserved = await all(40, (index) => reserveMonthlyVolume(sql, { orderId: orders[index]!, merchantAccountId: account!.id, reference: attemptReference(orders[index]!, 1) }));
        expect(reserved.filter((ok) => !ok), `round ${round}`).toEqual([]);
        const [volume] = await app.orm.em.fork().execute(`select reserved_amount from merchant_account_volumes where merchant_account_id = ? and currency = ?`, [account!.id, currency]);
        expect(volume).toEqual({ reserved_amount: '40.00' });
      }
    } finally {
      await wide.close();
    }
  });
});

/**
 * A local activity that times out is not stopped: it runs on beside the run the workflow starts next. Each test plays
 * such a late run against what the run beside it already did, through the same activity and query functions.
 */
describe('a run of a payment step that outlived its time limit', () => {
  const card = { bin: '424242', last4: '4242', network: 'NetworkA', expiryMonth: 12, expiryYear: 2030, fingerprint: 'f'.repeat(64) };

  async function openOrderOnTwoAccounts(amount = '25.00') {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('late', amount)], merchantAccounts: [merchantAccount('LATE-1'), merchantAccount('LATE-2')] });
    const activities = createPaymentOrderActivities({ orm: app.orm });
    const submitOrderId = await reserveOrderId(app.orm.em.fork());
    const email = `late-${randomUUID().slice(0, 8)}@example.com`;
    await activities.openPaymentOrder({
      tenantId: tenant.id, productId: tenant.products.late!, submitOrderId, workflowId: `test/${submitOrderId}`, email, amount, currency: 'USD',
      order: { mobileWalletA: false, partnerSession: `ps-${submitOrderId}` },
    });
    const request = { tenantId: tenant.id, submitOrderId, amount, currency: 'USD', network: 'NetworkA', triedMerchantAccountIds: [] };
    return { tenant, activities, submitOrderId, email, request };
  }

  const record = (submitOrderId: number, account: MerchantCandidate, outcome: 'approved' | 'declined' | 'unknown', amount = '25.00', sql: SqlExecutor = poolExecutor(app.orm)) =>
    recordAttempt(sql, {
      submitOrderId, reference: attemptReference(submitOrderId, 1), attemptNumber: 1, merchantAccount: account,
      processorTransactionId: outcome === 'unknown' ? null : `px-${submitOrderId}`,
      statusId: outcome === 'approved' ? 2636 : outcome === 'declined' ? 4302 : 4285, status: outcome, approved: outcome === 'approved',
      authCode: outcome === 'approved' ? '123456' : null, eci: null, amount, currency: 'USD', email: 'late@example.com', card, sandbox: true,
      exchange: { gateway: 'sandbox', httpStatus: outcome === 'unknown' ? 0 : 200, response: outcome }, completedAt: outcome === 'unknown' ? null : new Date(),
      final: outcome !== 'unknown',
    });

  const volumesOf = (tenantId: number) =>
    app.orm.em.fork().execute<{ mid: string; approved: string; reserved: string }[]>(
      `select m.mid, v.approved_amount::text as approved, v.reserved_amount::text as reserved
         from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.tenant_id = ? order by m.mid`,
      [tenantId],
    );

  it('takes no new reservation, on any account, for an attempt the run beside it already recorded (it would be sent to another MID)', async () => {
    const { tenant, activities, submitOrderId, request } = await openOrderOnTwoAccounts();
    // The run beside it chose the least used account, sent the attempt, and recorded it: the reservation ended there.
    const first = await activities.reserveMerchantAccount(request);
    await record(submitOrderId, first.account!, 'declined');
    const other = Object.values(tenant.mids).find((mid) => mid !== first.account!.mid);

    // The late run created the order itself, so it looks nothing up and goes straight to a reservation: refused.
    expect(await activities.reserveMerchantAccount(request, true)).toEqual({});
    const [otherAccount] = await app.orm.em.fork().execute<{ id: number }[]>(`select id from merchant_accounts where mid = ?`, [other]);
    const sql = poolExecutor(app.orm);
    expect(await reserveMonthlyVolume(sql, { orderId: submitOrderId, merchantAccountId: otherAccount!.id, reference: attemptReference(submitOrderId, 1) })).toBe(false);
    // The next attempt of a cascade still reserves.
    expect(await reserveMonthlyVolume(sql, { orderId: submitOrderId, merchantAccountId: otherAccount!.id, reference: attemptReference(submitOrderId, 2) })).toBe(true);
  });

  it('takes no reservation for an order already closed (the run beside it found no account and failed the payment)', async () => {
    const { activities, submitOrderId, request } = await openOrderOnTwoAccounts();
    await closeSubmitOrder(poolExecutor(app.orm), { orderId: submitOrderId, state: 'failed' });
    expect(await activities.reserveMerchantAccount(request, true)).toEqual({});
    expect(await activities.reserveMerchantAccount(request)).toEqual({});
  });

  it('sends nothing once Temporal gave its run up; the run that replaces it sends the attempt once', async () => {
    const { tenant, activities, submitOrderId, email, request } = await openOrderOnTwoAccounts('25.00');
    const { account } = await activities.reserveMerchantAccount(request);
    const authorization = createAuthorizationActivities({ orm: app.orm, logger: app.logger, secretBox: app.secretBox, cardVault: app.cardVault, processors: processorsFromConfig(app.config) });
    const sealedCard = await app.cardVault.seal({ pan: '4242424242424242', cvv: '123', expiryMonth: 12, expiryYear: 2030, bin: '424242', last4: '4242', network: 'NetworkA' });
    const attempt = {
      tenantId: tenant.id, productId: tenant.products.late!, submitOrderId, attemptNumber: 1, candidate: account!, amount: '25.00', currency: 'USD', email, card,
      sealedCard, threeDSecure: false, timeoutMs: 2_000,
    };
    // As the SDK's core does when a local activity times out: the run's context is cancelled.
    const givenUp = { cancellationSignal: AbortSignal.abort() } as unknown as Context;
    await expect(asyncLocalStorage.run(givenUp, () => authorization.authorizeAttempt(attempt, true))).rejects.toThrow(/not sent: its run was given up/);
    expect(await authorizationsFor(submitOrderId)).toBe(0);
    expect(await app.orm.em.fork().execute(`select 1 from transactions where order_id = ?`, [submitOrderId])).toHaveLength(0);

    expect((await authorization.authorizeAttempt(attempt)).outcome.kind).toBe('approved');
    expect(await authorizationsFor(submitOrderId)).toBe(1);
  });

  it('keeps an approval recorded first when the run beside it records an unknown answer: counted once, still refundable', async () => {
    const { tenant, activities, submitOrderId, request } = await openOrderOnTwoAccounts();
    const { account } = await activities.reserveMerchantAccount(request);
    expect(await record(submitOrderId, account!, 'approved')).toMatchObject({ alreadySettled: false });
    expect(await record(submitOrderId, account!, 'unknown')).toMatchObject({ alreadySettled: true, wasApproved: true });
    expect(await record(submitOrderId, account!, 'approved')).toMatchObject({ alreadySettled: true, wasApproved: true });
    // One row for the attempt, however many runs recorded it.
    const rows = await app.orm.em.fork().execute(`select success, refundable, status_id from transactions where order_id = ?`, [submitOrderId]);
    expect(rows).toEqual([{ success: true, refundable: true, status_id: 2636 }]);
    expect((await volumesOf(tenant.id)).find((volume) => volume.mid === account!.mid)).toMatchObject({ approved: '25.00', reserved: '0.00' });
  });

  it('ends approved and counts the amount once when eight runs record one attempt at once, approvals and unknown answers mixed', async () => {
    const { tenant, activities, submitOrderId, request } = await openOrderOnTwoAccounts();
    const { account } = await activities.reserveMerchantAccount(request);
    // The first run's record holds the attempt's row until it commits; the seven others, approvals and unknown answers
    // mixed, meet it there (run one after another, they would never see each other's rows half-written).
    const wide = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 8 });
    const held = app.orm.em.fork();
    await held.begin();
    try {
      await record(submitOrderId, account!, 'unknown', '25.00', held);
      // On a pool of their own, wide enough for all seven to wait at the row (the harness pool of 5 would queue them).
      const others = all(7, (index) => record(submitOrderId, account!, index % 2 === 0 ? 'approved' : 'unknown', '25.00', poolExecutor(wide)));
      await waitForLockWaiters(app.orm, '%routines.record_attempt%', { count: 7 });
      await held.commit();
      await others;
    } finally {
      if (held.isInTransaction()) await held.rollback();
      await wide.close();
    }
    // One row for the attempt, however many runs recorded it.
    const rows = await app.orm.em.fork().execute(`select success, refundable, status_id from transactions where order_id = ?`, [submitOrderId]);
    expect(rows).toEqual([{ success: true, refundable: true, status_id: 2636 }]);
    expect((await volumesOf(tenant.id)).find((volume) => volume.mid === account!.mid)).toMatchObject({ approved: '25.00', reserved: '0.00' });
  });

  it('refuses every late reservation fired at once after the attempt was recorded, on every account', async () => {
    const { tenant, activities, submitOrderId, request } = await openOrderOnTwoAccounts();
    const { account } = await activities.reserveMerchantAccount(request);
    await record(submitOrderId, account!, 'declined');
    const choices = await all(8, () => activities.reserveMerchantAccount(request, true));
    expect(choices).toEqual(Array.from({ length: 8 }, () => ({})));
    expect((await volumesOf(tenant.id)).map((volume) => volume.reserved)).toEqual((await volumesOf(tenant.id)).map(() => '0.00'));
  });

  const lastMonth = `(date_trunc('month', now()) - interval '1 month')::date`;

  /** An order whose amount was reserved last month (in flight at midnight on the 1st): order and volume row name that month. */
  async function reservedLastMonth() {
    const { activities, submitOrderId, request } = await openOrderOnTwoAccounts();
    const account = (await activities.reserveMerchantAccount(request)).account!;
    const em = app.orm.em.fork();
    await em.execute(`update orders set cap_reservation_month = ${lastMonth} where id = ?`, [submitOrderId]);
    await em.execute(`update merchant_account_volumes set month = ${lastMonth} where merchant_account_id = ?`, [account.merchantAccountId]);
    return { submitOrderId, account };
  }

  it('counts an approval in the month its amount was reserved in (an attempt in flight at midnight on the 1st)', async () => {
    const { submitOrderId, account } = await reservedLastMonth();
    const em = app.orm.em.fork();
    await record(submitOrderId, account, 'approved');
    const volumes = await em.execute(
      `select month = ${lastMonth} as last_month, approved_amount::text as approved, reserved_amount::text as reserved from merchant_account_volumes where merchant_account_id = ?`,
      [account.merchantAccountId],
    );
    expect(volumes).toEqual([{ last_month: true, approved: '25.00', reserved: '0.00' }]);
  });

  it('gives a voided approval\'s room on the cap back once, in the month it was counted in, when eight releases meet', async () => {
    const { submitOrderId, account } = await reservedLastMonth();
    const em = app.orm.em.fork();
    // This month another payment of 25.00 counts on the account.
    await em.execute(
      `insert into merchant_account_volumes (merchant_account_id, month, currency, approved_amount, reserved_amount) values (?, date_trunc('month', now())::date, 'USD', 25, 0)`,
      [account.merchantAccountId],
    );
    const { transactionId } = await record(submitOrderId, account, 'approved');
    // Last month, another payment of 25.00 counts beside it: a second release would take that one's room away.
    await em.execute(`update merchant_account_volumes set approved_amount = approved_amount + 25 where merchant_account_id = ? and month = ${lastMonth}`, [account.merchantAccountId]);
    // The void is recorded and holds the row until it commits; seven more releases (a hold's end, retries) wait for it.
    const exchange = { gateway: 'sandbox', httpStatus: 200, response: 'voided' };
    const held = app.orm.em.fork();
    await held.begin();
    try {
      await recordVoid(held, { orderId: submitOrderId, transactionId, voided: true, statusId: 4166, status: 'Voided', exchange });
      const releasing = all(7, () => releaseApprovedVolume(poolExecutor(app.orm), { orderId: submitOrderId, transactionId }));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await held.commit();
      await releasing;
    } finally {
      if (held.isInTransaction()) await held.rollback();
    }

    const volumes = await em.execute(
      `select month = ${lastMonth} as last_month, approved_amount::text as approved from merchant_account_volumes where merchant_account_id = ? order by month`,
      [account.merchantAccountId],
    );
    expect(volumes).toEqual([
      { last_month: true, approved: '25.00' },
      { last_month: false, approved: '25.00' },
    ]);
    const rows = await em.execute(`select kind, refundable from transactions where order_id = ? order by kind`, [submitOrderId]);
    expect(rows).toEqual([
      { kind: 'authorization', refundable: false },
      { kind: 'void', refundable: false },
    ]);
  });

  it('counts nothing for an attempt of an order that does not exist', async () => {
    const { tenant, activities, request } = await openOrderOnTwoAccounts();
    const { account } = await activities.reserveMerchantAccount(request);
    const before = await volumesOf(tenant.id);
    await expect(record(2_000_000_000, account!, 'approved')).rejects.toThrow(/does not exist/);
    expect(await volumesOf(tenant.id)).toEqual(before);
  });

  it('releases a reservation once when the order closes while another run releases it', async () => {
    const { tenant, activities, submitOrderId, request } = await openOrderOnTwoAccounts();
    const { account } = await activities.reserveMerchantAccount(request);
    const held = app.orm.em.fork();
    await held.begin();
    try {
      // The run beside it ends the reservation and holds the order's row until it commits; the close waits for it.
      await releaseMonthlyVolume(held, { orderId: submitOrderId });
      const closing = closeSubmitOrder(poolExecutor(app.orm), { orderId: submitOrderId, state: 'declined' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await held.commit();
      await closing;
    } finally {
      if (held.isInTransaction()) await held.rollback();
    }
    expect((await volumesOf(tenant.id)).find((volume) => volume.mid === account!.mid)).toMatchObject({ reserved: '0.00' });
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
