import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { seedTransaction, type SeededTransaction } from './support/mitigation-seed.ts';
import { createMerchantTenant, merchantAccount, oneOffProduct, type MerchantTenant } from './support/payments.ts';
import { undocumentedParts } from './support/openapi-answers.ts';

let app: TestApp;
let acme: MerchantTenant;
let child: MerchantTenant;
let other: MerchantTenant;
/** Every transaction a search by acme may find (its own and its child company's). */
const visible: SeededTransaction[] = [];
const foreign: SeededTransaction[] = [];
let campaigns: number[];
let secondApplication: number;
let subscriptionId: number;
let subscriptionOrderId: number;
const T0 = Date.parse('2026-06-15T12:00:00.000Z');
const hours = (n: number) => new Date(T0 - n * 3_600_000);

async function tenantBase(tenant: MerchantTenant, mid: string) {
  const [row] = await app.orm.em.fork().execute<{ application_id: number }[]>(`select application_id from products where id = ?`, [tenant.products.shop]);
  return { tenantId: tenant.id, productId: tenant.products.shop!, applicationId: row!.application_id, merchantAccountId: tenant.result.merchantAccounts.find((m) => m.mid === tenant.mids[mid])!.id };
}

beforeAll(async () => {
  app = await startTestApp();
  // Every refused search counts against the key's rate limit, and this suite sends hundreds.
  const fixture = () => ({ products: [oneOffProduct('shop', '19.99'), oneOffProduct('other-shop', '5.00')], merchantAccounts: [merchantAccount('M1'), merchantAccount('M2')], rateLimitPerMinute: 10_000 });
  [acme, child, other] = [await createMerchantTenant(app, fixture()), await createMerchantTenant(app, fixture()), await createMerchantTenant(app, fixture())];
  const em = app.orm.em.fork();
  await em.execute(`update tenants set parent_tenant_id = ? where id = ?`, [acme.id, child.id]);
  campaigns = (await em.execute<{ id: number }[]>(`insert into campaigns (tenant_id, name, created_at) values (?, 'spring', now()), (?, 'autumn', now()) returning id`, [acme.id, acme.id])).map((r) => r.id);
  const [application] = await em.execute<{ id: number }[]>(`insert into applications (tenant_id, slug, name, created_at, updated_at) values (?, 'second', 'Second', now(), now()) returning id`, [acme.id]);
  secondApplication = application!.id;
  await em.execute(`update products set application_id = ? where id = ?`, [secondApplication, acme.products['other-shop']]);

  const base = await tenantBase(acme, 'M1');
  const m2 = acme.result.merchantAccounts.find((m) => m.mid === acme.mids.M2)!.id;
  for (let i = 0; i < 48; i++) {
    const otherShop = i % 4 === 3;
    visible.push(
      await seedTransaction(app, base, {
        email: `buyer${i % 5}@example.com`,
        firstName: ['Ada', 'Grace', 'Alan'][i % 3]!,
        lastName: ['Lovelace', 'Hopper'][i % 2]!,
        bin: i % 2 ? '42424242' : '55555544',
        last4: ['4242', '4444', '0002'][i % 3]!,
        authCode: `A${i % 7}`,
        gatewayTransactionId: `gw-${i}`,
        currency: i % 4 === 0 ? 'EUR' : 'USD',
        amount: ['19.99', '5.00', '100.00'][i % 3]!,
        descriptor: i % 2 ? 'SHOP*Widgets 50%' : 'ACME*gadgets',
        sandbox: i % 5 === 0,
        success: i % 6 !== 5,
        productId: otherShop ? acme.products['other-shop'] : acme.products.shop,
        applicationId: otherShop ? secondApplication : base.applicationId,
        campaignId: i % 3 === 2 ? null : campaigns[i % 3]!,
        merchantAccountId: i % 2 ? m2 : base.merchantAccountId,
        // Rows 10 to 14 share one authorization time: the order falls back to the id.
        sentAt: i >= 10 && i <= 14 ? hours(10) : hours(i),
        // Row 40, authorized 40 h before T0, is captured 30 h later (inside a period that excludes its authorization).
        completedAt: i === 40 ? hours(10) : undefined,
      }),
    );
  }
  // A full refund of row 1 (5.00) and a partial one of row 2 (100.00): each its own transaction, referring to the original.
  for (const [index, amount] of [[1, '5.00'], [2, '40.00']] as const) {
    const original = visible[index]!;
    visible.push(
      await seedTransaction(app, base, {
        kind: 'refund', originalTransactionId: original.id, amount, orderId: original.orderId, email: original.email, currency: original.currency,
        merchantAccountId: original.merchantAccountId, sentAt: hours(-1 - index), descriptor: original.descriptor, productId: original.productId,
        applicationId: original.applicationId, campaignId: original.campaignId,
      }),
    );
  }
  // A void of row 4 (the /payments void writes one: kind 'void', original_transaction_id = the authorization).
  visible.push(
    await seedTransaction(app, base, {
      kind: 'void', originalTransactionId: visible[4]!.id, amount: visible[4]!.amount, orderId: visible[4]!.orderId, email: visible[4]!.email,
      currency: visible[4]!.currency, merchantAccountId: visible[4]!.merchantAccountId, sentAt: hours(-5), productId: visible[4]!.productId,
      applicationId: visible[4]!.applicationId, campaignId: visible[4]!.campaignId,
    }),
  );
  // An older (cancelled) subscription on row 3's own order: two subscriptions then belong to row 3's order, and the
  // answer must be the same on every read (the lowest id).
  const [older] = await em.execute<{ id: number }[]>(
    `insert into subscriptions (tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, created_at)
     select tenant_id, product_id, customer_id, id, 'buyer3@example.com', 'cancelled', 19.99, now() + interval '30 days', now() from orders where id = ? returning id`,
    [visible[3]!.orderId],
  );
  visible[3]!.subscriptionIds.push(older!.id);
  // A subscription created by row 3's submit order, with a rebill on its own order.
  const [subscriptionOrder] = await em.execute<{ id: number }[]>(
    `insert into orders (tenant_id, product_id, customer_id, kind, parent_order_id, amount, currency, state, created_at, updated_at)
     select tenant_id, product_id, customer_id, 'subscription', id, amount, currency, 'approved', now(), now() from orders where id = ? returning id`,
    [visible[3]!.orderId],
  );
  const [subscription] = await em.execute<{ id: number }[]>(
    `insert into subscriptions (tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, created_at)
     select tenant_id, product_id, customer_id, id, 'buyer3@example.com', 'active', 19.99, now() + interval '30 days', now() from orders where id = ? returning id`,
    [subscriptionOrder!.id],
  );
  subscriptionId = subscription!.id;
  subscriptionOrderId = subscriptionOrder!.id;
  visible[3]!.subscriptionIds.push(subscriptionId);
  visible.push(await seedTransaction(app, base, { orderId: subscriptionOrder!.id, email: 'buyer3@example.com', subscriptionIds: [subscriptionId], sentAt: hours(-10) }));
  // A rebill as billing makes one: an order of its own, named by the subscription's rebills row.
  const rebill = await seedTransaction(app, base, { email: 'buyer3@example.com', subscriptionIds: [subscriptionId], sentAt: hours(-9) });
  await em.execute(`insert into rebills (subscription_id, period, attempt, order_id, state, created_at) values (?, 1, 0, ?, 'paid', now())`, [subscriptionId, rebill.orderId]);
  visible.push(rebill);

  const childBase = await tenantBase(child, 'M1');
  for (let i = 0; i < 3; i++) visible.push(await seedTransaction(app, childBase, { email: 'buyer0@example.com', sentAt: hours(i + 0.5), authCode: 'A0' }));
  const otherBase = await tenantBase(other, 'M1');
  for (let i = 0; i < 5; i++) {
    foreign.push(await seedTransaction(app, otherBase, { email: 'buyer0@example.com', bin: '55555544', last4: '4444', authCode: 'A0', sentAt: hours(i), descriptor: 'ACME*gadgets' }));
  }
});
afterAll(() => app?.close());

async function search(body: unknown, tenant: MerchantTenant = acme, headers: Record<string, string> = tenant.adminHeaders) {
  const response = await fetch(`${app.baseUrl}/api/mitigation/transactions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** Newest authorization first, ties by id descending (PostgreSQL orders uuids as their hex text). */
const searchOrder = (a: SeededTransaction, b: SeededTransaction) => b.sentAt.getTime() - a.sentAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
const ids = (rows: SeededTransaction[]) => [...rows].sort(searchOrder).map((t) => t.id);

describe('POST /api/mitigation/transactions filters', () => {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  // Filters are functions: the seeded rows exist only once beforeAll ran.
  const cases: [string, () => Record<string, unknown>, (t: SeededTransaction) => boolean][] = [
    ['emails (any, case-insensitive)', () => ({ emails: ['BUYER1@example.com', 'buyer2@example.com'] }), (t) => ['buyer1@example.com', 'buyer2@example.com'].includes(t.email)],
    ['orderIds', () => ({ orderIds: [0, 5, 9].map((i) => visible[i]!.orderId) }), (t) => [0, 5, 9].some((i) => visible[i]!.orderId === t.orderId)],
    ['transactionIds', () => ({ transactionIds: [visible[7]!.id, visible[8]!.id, foreign[0]!.id] }), (t) => [visible[7]!.id, visible[8]!.id].includes(t.id)],
    ['gatewayTransactionIds', () => ({ gatewayTransactionIds: ['gw-4', 'gw-6'] }), (t) => ['gw-4', 'gw-6'].includes(t.gatewayTransactionId ?? '')],
    ['bin (first 6)', () => ({ bin: '555555' }), (t) => t.bin.startsWith('555555')],
    ['last4', () => ({ last4: '0002' }), (t) => t.last4 === '0002'],
    ['firstName (case-insensitive)', () => ({ firstName: 'grace' }), (t) => t.firstName === 'Grace'],
    ['lastName', () => ({ lastName: 'Hopper' }), (t) => t.lastName === 'Hopper'],
    ['authCodes', () => ({ authCodes: ['A0', 'A3'] }), (t) => ['A0', 'A3'].includes(t.authCode ?? '')],
    ['currency', () => ({ currency: 'eur' }), (t) => t.currency === 'EUR'],
    ['dateFrom/dateTo (authorization day)', () => ({ dateFrom: day(hours(20)), dateTo: day(hours(20)) }), (t) => day(t.sentAt) === day(hours(20))],
    ['descriptorContains (case-insensitive, % literal)', () => ({ descriptorContains: 'widgets 50%' }), (t) => (t.descriptor ?? '').toLowerCase().includes('widgets 50%')],
    ['descriptorContains with no match for a LIKE wildcard', () => ({ descriptorContains: 'S_OP' }), () => false],
    ['sandbox: true', () => ({ sandbox: true }), (t) => t.sandbox],
    ['sandbox: false', () => ({ sandbox: false }), (t) => !t.sandbox],
    ['applicationIds', () => ({ applicationIds: [secondApplication] }), (t) => t.applicationId === secondApplication],
    ['productIds', () => ({ productIds: [acme.products['other-shop']] }), (t) => t.productId === acme.products['other-shop']],
    ['campaignIds', () => ({ campaignIds: [campaigns[1]] }), (t) => t.campaignId === campaigns[1]],
    ['merchantAccountIds', () => ({ merchantAccountIds: [visible[1]!.merchantAccountId] }), (t) => t.merchantAccountId === visible[1]!.merchantAccountId],
    ['companyIds (the child company)', () => ({ companyIds: [child.id] }), (t) => t.tenantId === child.id],
    ['subscriptionIds', () => ({ subscriptionIds: [subscriptionId] }), (t) => t.subscriptionIds.includes(subscriptionId)],
    ['amounts (exact)', () => ({ amounts: [5, 100] }), (t) => ['5.00', '100.00'].includes(t.amount)],
    ['AND of several filters', () => ({ emails: ['buyer0@example.com'], currency: 'USD', sandbox: false, authCodes: ['A0', 'A5', 'A6'] }), (t) =>
      t.email === 'buyer0@example.com' && t.currency === 'USD' && !t.sandbox && ['A0', 'A5', 'A6'].includes(t.authCode ?? '')],
  ];

  it.each(cases)('%s', async (_name, filter, expected) => {
    const { status, body } = await search({ limit: 1000, ...filter() });
    expect(status).toBe(200);
    const want = ids(visible.filter(expected));
    expect(body.transactions.map((t: any) => t.transactionId)).toEqual(want);
    expect(body).toMatchObject({ success: true, count: want.length, pageNumber: 1, moreResults: false });
  });

  it('finds a name by its spelling where JavaScript and PostgreSQL lower-case differently (a final sigma, a dotted capital I)', async () => {
    const greek = await createMerchantTenant(app, { products: [oneOffProduct('shop', '19.99')], merchantAccounts: [merchantAccount('M1')], rateLimitPerMinute: 10_000 });
    const base = await tenantBase(greek, 'M1');
    const nikos = await seedTransaction(app, base, { firstName: 'ΝΙΚΟΣ', lastName: 'Παπαδόπουλος' });
    const ilknur = await seedTransaction(app, base, { firstName: 'İlknur', lastName: 'Yılmaz' });
    const found = async (filter: Record<string, string>) => {
      const response = await fetch(`${app.baseUrl}/api/mitigation/transactions`, {
        method: 'POST',
        headers: { ...greek.adminHeaders, 'content-type': 'application/json' },
        body: JSON.stringify(filter),
      });
      return ((await response.json()) as { transactions: { transactionId: string }[] }).transactions.map((t) => t.transactionId);
    };
    expect(await found({ firstName: 'ΝΙΚΟΣ' })).toEqual([nikos.id]);
    expect(await found({ firstName: 'νικοσ' })).toEqual([nikos.id]);
    expect(await found({ lastName: 'Παπαδόπουλος' })).toEqual([nikos.id]);
    expect(await found({ firstName: 'İlknur' })).toEqual([ilknur.id]);
    expect(await found({ firstName: ' İLKNUR ' })).toEqual([ilknur.id]);
  });

  it('includeUpdated also finds authorizations captured in the period, and only then', async () => {
    const period = { dateFrom: '2026-06-15', dateTo: '2026-06-15' };
    const inPeriod = (d: Date | null) => d !== null && d.toISOString().startsWith('2026-06-15');
    const plain = await search({ limit: 1000, ...period });
    expect(plain.body.transactions.map((t: any) => t.transactionId)).toEqual(ids(visible.filter((t) => inPeriod(t.sentAt))));
    expect(plain.body.transactions.map((t: any) => t.transactionId)).not.toContain(visible[40]!.id);
    const updated = await search({ limit: 1000, ...period, includeUpdated: true });
    const want = ids(visible.filter((t) => inPeriod(t.sentAt) || (t.kind === 'authorization' && t.success && inPeriod(t.completedAt))));
    expect(updated.body.transactions.map((t: any) => t.transactionId)).toEqual(want);
    expect(want).toContain(visible[40]!.id);
    // Paged, the captured-later authorization takes its place in the order like any other.
    const paged: string[] = [];
    for (let pageNumber = 1; pageNumber <= Math.ceil(want.length / 3); pageNumber++) {
      paged.push(...(await search({ ...period, includeUpdated: true, limit: 3, pageNumber })).body.transactions.map((t: any) => t.transactionId));
    }
    expect(paged).toEqual(want);
  });
});

describe('records and pages', () => {
  it('answers records exactly as spec 2.8', async () => {
    const original = visible[2]!;
    const { body } = await search({ transactionIds: [original.id] });
    expect(Object.keys(body).sort()).toEqual(['count', 'message', 'moreResults', 'pageNumber', 'success', 'transactions']);
    expect(body).toMatchObject({ count: 1, message: '1 transaction' });
    expect(body.transactions).toEqual([
      {
        gateway: 'sandbox',
        transactionId: original.id,
        orderId: original.orderId,
        sent: original.sentAt.toISOString(),
        email: original.email,
        sandbox: false,
        applicationId: original.applicationId,
        status: 'Transaction succeeded',
        statusId: 2636,
        success: true,
        completed: original.completedAt!.toISOString(),
        currency: 'USD',
        amount: 100,
        mid: acme.mids.M1,
        descriptor: 'ACME*gadgets',
        customerId: original.customerId,
        authCode: 'A2',
        gatewayTransactionId: 'gw-2',
        firstName: 'Alan',
        lastName: 'Lovelace',
        bin: '555555',
        last4: '0002',
        refunded: true,
        refundable: true,
        hasAlert: false,
        chargedBack: false,
        originalTransactionId: null,
      },
    ]);
  });

  it('shows refunds as their own transactions and the originals as refunded; a fully refunded one is no longer refundable', async () => {
    const { body } = await search({ orderIds: [visible[1]!.orderId, visible[2]!.orderId], limit: 10 });
    const byId = new Map(body.transactions.map((t: any) => [t.transactionId, t]));
    expect(byId.get(visible[1]!.id)).toMatchObject({ refunded: true, refundable: false, originalTransactionId: null });
    expect(byId.get(visible[2]!.id)).toMatchObject({ refunded: true, refundable: true });
    const refunds = body.transactions.filter((t: any) => t.originalTransactionId !== null);
    expect(refunds.map((t: any) => [t.originalTransactionId, t.amount]).sort()).toEqual([[visible[1]!.id, 5], [visible[2]!.id, 40]].sort());
    expect(refunds.every((t: any) => t.refundable === false && t.refunded === false)).toBe(true);
    const declined = (await search({ transactionIds: [visible[5]!.id] })).body.transactions[0];
    expect(declined).toMatchObject({ success: false, refundable: false, refunded: false });
  });

  it("finds a plan's checkout charge by the orderId its submit answered (the subscription's own order), with that order's own transactions", async () => {
    const { body } = await search({ orderIds: [subscriptionOrderId] });
    const found = body.transactions.map((t: any) => t.transactionId).sort();
    const expected = visible.filter((t) => t.orderId === subscriptionOrderId || t.orderId === visible[3]!.orderId).map((t) => t.id).sort();
    expect(found).toEqual(expected);
    expect(found).toContain(visible[3]!.id);
  });

  it('shows a void as no refund and no success: no originalTransactionId, and the voided authorization is not refunded', async () => {
    const voided = visible[4]!;
    const voidRow = visible.find((t) => t.kind === 'void')!;
    const { body } = await search({ orderIds: [voided.orderId] });
    const byId = new Map(body.transactions.map((t: any) => [t.transactionId, t]));
    expect(byId.size).toBe(2);
    expect(byId.get(voidRow.id)).toMatchObject({ originalTransactionId: null, refunded: false, refundable: false, success: false, amount: Number(voided.amount) });
    expect(byId.get(voided.id)).toMatchObject({ originalTransactionId: null, refunded: false, refundable: true });
  });

  it('answers the 6-digit bin the bin filter takes: a record found by its own bin', async () => {
    for (const seeded of [visible[0]!, visible[1]!]) {
      const [record] = (await search({ transactionIds: [seeded.id] })).body.transactions;
      expect(record.bin).toBe(seeded.bin.slice(0, 6));
      const found = await search({ bin: record.bin, limit: 1000 });
      expect(found.status).toBe(200);
      expect(found.body.transactions.map((t: any) => t.transactionId)).toContain(seeded.id);
    }
  });

  it('pages newest first, ties by id, never skipping or repeating; moreResults is exact', async () => {
    const all = ids(visible);
    const seen: string[] = [];
    for (let pageNumber = 1; ; pageNumber++) {
      const { body } = await search({ pageNumber, limit: 7 });
      expect(body.pageNumber).toBe(pageNumber);
      seen.push(...body.transactions.map((t: any) => t.transactionId));
      expect(body.moreResults).toBe(seen.length < all.length);
      if (!body.moreResults) break;
    }
    expect(seen).toEqual(all);
    // A page that ends exactly at the last record says there is no more.
    const exact = await search({ limit: all.length });
    expect(exact.body).toMatchObject({ count: all.length, moreResults: false });
    const beyond = await search({ pageNumber: 99, limit: 100 });
    expect(beyond.body).toMatchObject({ count: 0, moreResults: false, transactions: [] });
  });

  it('answers as its OpenAPI document says, success and refusal', async () => {
    const found = await search({ limit: 1000 });
    expect(await undocumentedParts(app.baseUrl, '/api/mitigation/transactions', 'post', 200, found.body)).toEqual([]);
    const refused = await search({ limit: 5000 });
    expect(await undocumentedParts(app.baseUrl, '/api/mitigation/transactions', 'post', 400, refused.body)).toEqual([]);
  });

  it('defaults to page 1 of 100', async () => {
    // A tenant of its own with more than 100 transactions, so the default is what cuts the page.
    const bulk = await createMerchantTenant(app, { products: [oneOffProduct('shop', '19.99')], merchantAccounts: [merchantAccount('M1')] });
    const bulkBase = await tenantBase(bulk, 'M1');
    const seeded: SeededTransaction[] = [];
    for (let i = 0; i < 105; i++) seeded.push(await seedTransaction(app, bulkBase, { email: `bulk${i % 7}@example.com`, sentAt: hours(i) }));
    const { status, body } = await search({}, bulk);
    expect(status).toBe(200);
    expect(body).toMatchObject({ pageNumber: 1, count: 100, moreResults: true });
    expect(body.transactions.map((t: any) => t.transactionId)).toEqual(ids(seeded).slice(0, 100));
    expect((await search({ pageNumber: 2 }, bulk)).body).toMatchObject({ pageNumber: 2, count: 5, moreResults: false });
  });
});

describe('isolation and bad input', () => {
  it("never returns another tenant's transactions, whatever is asked", async () => {
    const foreignIds = new Set(foreign.map((t) => t.id));
    for (const filter of [{}, { transactionIds: foreign.map((t) => t.id) }, { orderIds: foreign.map((t) => t.orderId) }, { companyIds: [other.id] }, { emails: ['buyer0@example.com'] }]) {
      const { body } = await search({ limit: 1000, ...filter });
      expect(body.transactions.filter((t: any) => foreignIds.has(t.transactionId))).toEqual([]);
    }
    expect((await search({ companyIds: [other.id] })).body.count).toBe(0);
    // The child company sees its own only, not its parent's.
    const fromChild = await search({ limit: 1000 }, child);
    expect(fromChild.body.transactions.map((t: any) => t.transactionId)).toEqual(ids(visible.filter((t) => t.tenantId === child.id)));
    expect((await search({}, acme, { ...acme.adminHeaders, clientid: other.clientId })).status).toBe(403);
    expect((await search({}, acme, { clientid: acme.clientId, useremail: 'a@example.com' })).status).toBe(401);
  });

  it('refuses query parameters, which it takes none of: filters go in the body', async () => {
    const response = await fetch(`${app.baseUrl}/api/mitigation/transactions?emails=a@example.com`, {
      method: 'POST',
      headers: { ...acme.adminHeaders, 'content-type': 'application/json' },
      body: '{}',
    });
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 400, body: { success: false, message: 'emails is not a known field' } });
  });

  it.each([
    [{ limit: 1001 }, 'limit must be <= 1000'],
    [{ limit: 0 }, 'limit must be >= 1'],
    [{ pageNumber: 0 }, 'pageNumber must be >= 1'],
    [{ pageNumber: 10_000, limit: 1000 }, 'pageNumber skips more than'],
    [{ colour: 'red' }, 'colour is not a known field'],
    [{ emails: 'a@example.com' }, 'emails must be array'],
    [{ orderIds: ['1'] }, 'orderIds[0] must be integer'],
    [{ transactionIds: ['not-a-uuid'] }, 'transactionIds[0] must match pattern'],
    // `format: uuid` takes a urn:uuid: prefix that the database's uuid cast refuses.
    [{ transactionIds: ['urn:uuid:6f1c2a64-0d6e-4b8e-9c55-1d2f3a4b5c6d'] }, 'transactionIds[0] must match pattern'],
    // Days `format: date` takes whose period PostgreSQL cannot hold (year 0, the day after 9999-12-31).
    [{ dateTo: '9999-12-31' }, 'dateTo must be a day of the years 1970 to 9998'],
    [{ dateFrom: '0000-01-01' }, 'dateFrom must be a day of the years 1970 to 9998'],
    [{ descriptorContains: 'ab' }, 'descriptorContains must NOT have fewer than 3 characters'],
    [{ descriptorContains: '   ' }, 'descriptorContains must have at least 3 characters'],
    [{ firstName: '  ' }, 'firstName must have at least 1 character'],
    // Four ordered branches (parent and child, each with captured-later authorizations) at page 500 of 1,000.
    [{ dateFrom: '2026-06-01', dateTo: '2026-06-30', includeUpdated: true, pageNumber: 500, limit: 1000 }, 'pageNumber is too deep'],
    [{ bin: '4242' }, 'bin must match pattern'],
    [{ dateFrom: '2026-02-30' }, 'dateFrom'],
    [{ dateFrom: '2026-06-02', dateTo: '2026-06-01' }, 'dateTo must not be before dateFrom'],
    [{ amounts: [1.234] }, 'amounts[0]'],
    [{ descriptorContains: 'x'.repeat(256) }, 'descriptorContains'],
    [{ emails: ['a\u0000b@example.com'] }, 'NUL'],
    [{ sandbox: 'yes' }, 'sandbox must be boolean'],
  ])('refuses %j with 400 naming the field', async (body, message) => {
    const { status, body: answer } = await search(body);
    expect(status).toBe(400);
    expect(answer.success).toBe(false);
    expect(answer.message).toContain(message);
  });
});

describe('GraphQL mitigationTransactions', () => {
  async function graphql(query: string, variables: Record<string, unknown> = {}, tenant = acme) {
    const response = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as Record<string, any>;
  }
  const QUERY = `query($first: Int, $after: String, $emails: [String!], $currency: String) {
    mitigationTransactions(first: $first, after: $after, emails: $emails, currency: $currency) {
      edges { cursor node { transactionId orderId amount order { id kind } customer { id email } merchantAccount { id mid currencies { gatewayCredentials { apiKey } } } subscription { id state } } }
      pageInfo { hasNextPage endCursor }
    } }`;

  it('walks the same records as REST with cursors, related records attached', async () => {
    const seen: any[] = [];
    let after: string | null = null;
    do {
      const answer = await graphql(QUERY, { first: 6, after, emails: ['buyer0@example.com', 'buyer3@example.com'] });
      expect(answer.errors).toBeUndefined();
      const connection = answer.data.mitigationTransactions;
      seen.push(...connection.edges.map((e: any) => e.node));
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null;
    } while (after);
    const rest = await search({ emails: ['buyer0@example.com', 'buyer3@example.com'], limit: 1000 });
    expect(seen.map((n) => n.transactionId)).toEqual(rest.body.transactions.map((t: any) => t.transactionId));
    for (const node of seen) {
      const seeded = visible.find((t) => t.id === node.transactionId)!;
      expect(node.order.id).toBe(seeded.orderId);
      expect(node.customer).toEqual({ id: seeded.customerId, email: seeded.email });
      expect(node.merchantAccount.id).toBe(seeded.merchantAccountId);
      expect(node.merchantAccount.currencies[0].gatewayCredentials.apiKey).toMatch(/^\*\*\*\*/);
      expect(node.subscription?.id ?? null).toBe(seeded.subscriptionIds[0] ?? null);
    }
  });

  it("gives the operator, who names the tenant, the same related records as the tenant's own key", async () => {
    const operator = { apiKey: app.config.operatorToken! } as typeof acme;
    const OPERATOR_QUERY = `query($tenantId: Int!) { mitigationTransactions(tenantId: $tenantId, first: 5) {
      edges { node { transactionId order { id } customer { id email } merchantAccount { id } subscription { id } } } } }`;
    const asOperator = await graphql(OPERATOR_QUERY, { tenantId: acme.id }, operator);
    expect(asOperator.errors).toBeUndefined();
    const asTenant = await graphql(OPERATOR_QUERY.replace('tenantId: $tenantId, ', '').replace('($tenantId: Int!)', ''));
    expect(asOperator.data.mitigationTransactions.edges).toEqual(asTenant.data.mitigationTransactions.edges);
    expect(asOperator.data.mitigationTransactions.edges[0].node.order.id).toBeGreaterThan(0);
  });

  it('reads related records with a fixed number of statements, whatever the page size (no N+1)', async () => {
    const connection = app.orm.em.getConnection();
    const original = connection.execute.bind(connection);
    let statements = 0;
    connection.execute = ((...args: Parameters<typeof original>) => {
      statements++;
      return original(...args);
    }) as typeof connection.execute;
    try {
      const count = async (first: number) => {
        statements = 0;
        const answer = await graphql(QUERY, { first });
        expect(answer.errors).toBeUndefined();
        expect(answer.data.mitigationTransactions.edges).toHaveLength(first);
        return statements;
      };
      const small = await count(2);
      const large = await count(40);
      expect(small).toBeGreaterThan(4);
      expect(large).toBe(small);
    } finally {
      connection.execute = original;
    }
  });

  it('refuses with the REST rules what REST refuses: empty names, short descriptors, urn uuids, unholdable days', async () => {
    for (const [args, field] of [
      ['descriptorContains: ""', 'descriptorContains'],
      ['descriptorContains: "ab"', 'descriptorContains'],
      ['firstName: ""', 'firstName'],
      ['lastName: "  "', 'lastName'],
      ['emails: [""]', 'emails[0]'],
      ['transactionIds: ["urn:uuid:6f1c2a64-0d6e-4b8e-9c55-1d2f3a4b5c6d"]', 'transactionIds'],
      ['dateTo: "9999-12-31"', 'dateTo'],
      ['dateFrom: "0000-01-01"', 'dateFrom'],
    ] as const) {
      const answer = await graphql(`{ mitigationTransactions(${args}) { edges { node { transactionId } } } }`);
      expect(answer.errors?.[0]?.extensions.code, args).toBe('BAD_USER_INPUT');
      expect(JSON.stringify(answer.errors[0]), args).toContain(field);
    }
  });

  it('refuses a forged cursor and bad filters as BAD_USER_INPUT', async () => {
    expect((await graphql(QUERY, { after: 'bm90LWEtY3Vyc29y' })).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    // Well-formed but far outside any time PostgreSQL can compute with (would overflow the timestamp arithmetic).
    for (const micros of ['-999999999999999999', '999999999999999999', '-1']) {
      const forged = Buffer.from(JSON.stringify(['transactions', micros, visible[0]!.id])).toString('base64url');
      const answer = await graphql(QUERY, { after: forged });
      expect(answer.errors?.[0]?.extensions.code, micros).toBe('BAD_USER_INPUT');
    }
    expect((await graphql(QUERY, { first: 201 })).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect((await graphql(QUERY, { currency: 'dollars' })).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    // Three letters no card is charged in match nothing: said, in REST as in GraphQL.
    expect((await graphql(QUERY, { currency: 'xyz' })).errors[0]).toMatchObject({ message: expect.stringContaining('currency must be an ISO 4217 currency code'), extensions: { code: 'BAD_USER_INPUT' } });
    expect(await search({ currency: 'xyz' })).toMatchObject({ status: 400, body: { success: false, message: expect.stringContaining('currency must be an ISO 4217 currency code') } });
    expect((await graphql(QUERY, { emails: [] })).errors[0]).toMatchObject({ message: expect.stringContaining('emails must hold at least one value'), extensions: { code: 'BAD_USER_INPUT' } });
    const fromOther = await graphql(`{ mitigationTransactions(first: 200) { edges { node { transactionId } } } }`, {}, other);
    expect(fromOther.data.mitigationTransactions.edges.map((e: any) => e.node.transactionId).sort()).toEqual(foreign.map((t) => t.id).sort());
  });
});

it('still answers the deepest page a search of four branches may read', async () => {
  const { status, body } = await search({ dateFrom: '2026-06-01', dateTo: '2026-06-30', includeUpdated: true, pageNumber: 499, limit: 1000 });
  expect(status).toBe(200);
  expect(body).toMatchObject({ count: 0, moreResults: false });
});

it('finds nothing for an unknown uuid', async () => {
  expect((await search({ transactionIds: [randomUUID()] })).body.count).toBe(0);
});
