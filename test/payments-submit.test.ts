import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestHash } from '../services/payments/submit-payment.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, card, createMerchantTenant, createPaymentTenant, localActivitiesOf, merchantAccount, oneOffProduct, post, submitBody, type PaymentTenant } from './support/payments.ts';

let app: TestApp;
let tenant: PaymentTenant;

beforeAll(async () => {
  app = await startTestApp({}, { hostWorker: true });
  await app.startWorker();
  tenant = await createPaymentTenant(app);
});
afterAll(() => app?.close());

const submit = (body: unknown, headers: Record<string, string> = {}, productId = tenant.productId, apiKey = `Bearer ${tenant.apiKey}`) =>
  post(app, `/api/${productId}`, apiKey, body, headers);

const RESULT_FIELDS: Record<string, string> = {
  serviceSession: 'string', partnerSession: 'string', subscribeSuccess: 'boolean', chargeSuccess: 'boolean', info: 'string', error: 'string',
  email: 'string', message: 'string', orderId: 'number', descriptor: 'string', mid: 'string', threeDSecureId: 'string', transactionId: 'string',
  amount: 'number', statusId: 'number', declineSalvage: 'boolean', merchantAccountId: 'number', midPortalUrl: 'string', bin: 'string',
  binCountry: 'string', last4: 'string', eci: 'string', networkTokenized: 'boolean', submitOrderId: 'number', mobileWalletA: 'boolean',
  mobileWalletB: 'boolean', gatewayResponses: 'object', subscriptionId: 'number',
};

function expectFullShape(result: Record<string, unknown>) {
  expect(Object.keys(result).sort()).toEqual(Object.keys(RESULT_FIELDS).sort());
  for (const [field, type] of Object.entries(RESULT_FIELDS)) expect(typeof result[field], field).toBe(type);
}

describe('POST /api/{productId}', () => {
  it('approves a good card with the full result of spec 2.3 and records the transaction', async () => {
    const body = submitBody('4242424242424242');
    const { status, body: result } = await submit(body, {}, tenant.productId, tenant.apiKey);
    expect(status).toBe(200);
    expectFullShape(result);
    expect(result).toMatchObject({
      info: 'Success', chargeSuccess: true, subscribeSuccess: false, statusId: 2636, error: '', amount: 19.99, email: body.email,
      partnerSession: body.partnerSession, bin: '42424242', last4: '4242', binCountry: 'US', mid: tenant.mids[0], descriptor: 'SHOP*1',
      threeDSecureId: '', subscriptionId: 0, declineSalvage: false,
    });
    expect(result.submitOrderId).toBeGreaterThan(0);
    expect(result.orderId).toBe(result.submitOrderId);
    expect(result.transactionId).toMatch(/^sbx_/);
    expect(result.gatewayResponses).toEqual([{ gateway: 'sandbox', httpStatus: 200, response: expect.stringContaining('"approved"') }]);
    const [row] = await app.orm.em.fork().execute(`select * from transactions where order_id = ?`, [result.submitOrderId]);
    expect(row).toMatchObject({ status_id: 2636, success: true, amount: '19.99', currency: 'USD', bin: '42424242', last4: '4242', partner_session: body.partnerSession, gateway_transaction_id: result.transactionId, mid: tenant.mids[0] });
    expect(await authorizationsFor(result.submitOrderId)).toBe(1);
  });

  it.each([
    ['4000000000000002', 3617, 'Declined'],
    ['4000000000009995', 3512, 'Insufficient Funds'],
    ['4000000000000069', 3137, 'Card Expired'],
    ['4000000000000127', 3627, 'Invalid card security code'],
    ['4000000000000119', 4273, 'Processing Error - Try Again'],
  ])('answers a declined card %s with HTTP 200, info Error and status %i', async (pan, statusId, error) => {
    const { status, body: result } = await submit(submitBody(pan));
    expect(status).toBe(200);
    expectFullShape(result);
    expect(result).toMatchObject({ info: 'Error', statusId, error, chargeSuccess: false });
  });

  it.each([
    [{ partnerSession: undefined, serviceSession: undefined }, 'Either serviceSession or partnerSession is required'],
    [{ email: 'not-an-email' }, 'Invalid Email'],
    [{ email: undefined }, 'Invalid Email'],
    [{ card: card('4242424242424242', { expiryMonth: 0 }) }, 'Invalid expiry'],
    [{ card: card('4242424242424242', { expiryYear: undefined }) }, 'Invalid expiry'],
    [{ card: card('4242424242424242', { cvv: '12' }) }, 'Invalid CVV'],
    [{ card: card('4242424242424242', { cvv: undefined }) }, 'Invalid CVV'],
    [{ card: card('4242424242424241') }, 'Invalid CC Number'],
    [{ card: card('42424242') }, 'Invalid CC Number'],
    [{ card: card('378282246310005', { cvv: '1234' }) }, 'NetworkC cards not supported'],
    [{ card: { encrypted: 'eyJhbGciOi.x.y.z.w', expiryMonth: 12, expiryYear: 2030 } }, 'Bin and Last4 required along with Encrypted data'],
    [{ mid: 'NO-SUCH-MID' }, 'Specified Mid not found'],
    // Too long or out of range is as invalid as malformed: the same 7.1 answer, not a request-level 400.
    [{ email: `${'a'.repeat(310)}@example.com` }, 'Invalid Email'],
    [{ card: card('4242424242424242'.repeat(2) + '4') }, 'Invalid CC Number'],
    [{ card: card('4242424242424242', { expiryMonth: -1 }) }, 'Invalid expiry'],
    [{ card: card('4242424242424242', { expiryMonth: 100 }) }, 'Invalid expiry'],
    [{ card: card('4242424242424242', { expiryYear: -2030 }) }, 'Invalid expiry'],
    [{ card: card('4242424242424242', { cvv: '123456789' }) }, 'Invalid CVV'],
  ])('fails pre-processing with the exact 7.1 error (%#)', async (overrides, error) => {
    const { status, body: result } = await submit(submitBody('4242424242424242', overrides));
    expect(status).toBe(200);
    expectFullShape(result);
    expect(result).toMatchObject({ info: 'Failed', error, message: error, statusId: 0, submitOrderId: 0, transactionId: '' });
  });

  it('refuses a card sent both encrypted and in the clear, charging neither', async () => {
    const key = { 'idempotency-key': `two-ways-${randomUUID()}` };
    const both = await submit(submitBody('4242424242424242', { card: { ...card('5555555555554444'), encrypted: 'eyJhbGciOi.x.y.z.w', bin: '424242', lastFour: '4242' } }), key);
    expect(both).toEqual({ status: 400, body: { success: false, message: 'card.pan cannot be sent beside card.encrypted; send the card one way' } });
    // Refused before the key was claimed: the corrected request under the same key is charged.
    expect((await submit(submitBody('4242424242424242'), key)).body).toMatchObject({ info: 'Success' });
  });

  it("refuses another tenant's MID and another tenant's product", async () => {
    const other = await createPaymentTenant(app);
    const { body: result } = await submit(submitBody('4242424242424242', { mid: other.mids[0] }));
    expect(result).toMatchObject({ info: 'Failed', error: 'Specified Mid does not belong to Tenant account' });
    const foreign = await submit(submitBody('4242424242424242'), {}, other.productId);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ success: false, message: `Product ${other.productId} not found` });
  });

  it('names the network a product does not accept', async () => {
    const visaOnly = await createPaymentTenant(app, { acceptedNetworks: ['NetworkA'] });
    const { body: result } = await post(app, `/api/${visaOnly.productId}`, visaOnly.apiKey, submitBody('5555555555554444'));
    expect(result).toMatchObject({ info: 'Failed', error: 'NetworkB cards not supported' });
  });

  it('declines with 4292 when a MID names a processor this deployment has no adapter for', async () => {
    const misconfigured = await createPaymentTenant(app);
    await app.orm.em.fork().execute(`update merchant_accounts set gateway = 'nowhere' where tenant_id = ?`, [misconfigured.id]);
    const { status, body: result } = await post(app, `/api/${misconfigured.productId}`, misconfigured.apiKey, submitBody('4242424242424242'));
    expect(status).toBe(200);
    expect(result).toMatchObject({ info: 'Error', statusId: 4292, error: 'Processor Configuration Invalid' });
    expect(result.gatewayResponses).toEqual([{ gateway: 'nowhere', httpStatus: 0, response: 'No adapter is configured for gateway "nowhere"' }]);
  });

  it('uses the MID given in `mid`', async () => {
    const { body: result } = await submit(submitBody('4242424242424242', { mid: tenant.mids[1] }));
    expect(result).toMatchObject({ info: 'Success', mid: tenant.mids[1] });
  });

  it('cascades a decline once to a MID of another bank, one gatewayResponses item per attempt', async () => {
    const { body: result } = await submit(submitBody('4000000000000341', { cascade: true }));
    expect(result).toMatchObject({ info: 'Success', statusId: 2636, mid: tenant.mids[1] });
    expect(result.gatewayResponses).toHaveLength(2);
    expect(result.gatewayResponses[0].response).toContain('"declined"');
    const withoutCascade = await submit(submitBody('4000000000000341'));
    expect(withoutCascade.body).toMatchObject({ info: 'Error', statusId: 3617, mid: tenant.mids[0] });
    expect(withoutCascade.body.gatewayResponses).toHaveLength(1);
  });

  it('never cascades a non-cascadable decline', async () => {
    const { body: result } = await submit(submitBody('4000000000000127', { cascade: true }));
    expect(result).toMatchObject({ info: 'Error', statusId: 3627 });
    expect(result.gatewayResponses).toHaveLength(1);
  });

  it('asks the processor before anything else when an answer is lost, and charges once', async () => {
    const slow = await createSlowTenant();
    const { body: result } = await post(app, `/api/${slow.productId}`, slow.apiKey, submitBody('4242424242424242', { cascade: true }));
    expect(result).toMatchObject({ info: 'Success', statusId: 2636, mid: slow.mids[0] });
    expect(result.gatewayResponses[0]).toMatchObject({ httpStatus: 0, response: expect.stringContaining('timeout') });
    expect(result.gatewayResponses.at(-1)).toMatchObject({ httpStatus: 200 });
    expect(await authorizationsFor(result.submitOrderId)).toBe(1);
  });

  it('a first step that fails (blocked past its timeout) goes on step by step: charged once, one transaction, nothing left reserved, the timed-out run sends nothing', async () => {
    const blocked = await createPaymentTenant(app);
    const email = `blocked-${randomUUID()}@example.com`;
    expect((await post(app, `/api/${blocked.productId}`, blocked.apiKey, submitBody('4242424242424242', { email }))).body).toMatchObject({ info: 'Success' });
    // Opening an order upserts its customer: holding that row blocks the first step past its 6 s (processor timeout + 5 s).
    const locker = app.orm.em.fork();
    await locker.begin();
    try {
      expect(await locker.execute(`select id from customers where tenant_id = ? and email = ? for update`, [blocked.id, email])).toHaveLength(1);
      const submitted = post(app, `/api/${blocked.productId}`, blocked.apiKey, submitBody('4242424242424242', { email }));
      await new Promise((resolve) => setTimeout(resolve, 7_500));
      await locker.rollback();
      const { status, body: result } = await submitted;
      expect(status).toBe(200);
      expect(result).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, gatewayResponses: [expect.objectContaining({ httpStatus: 200 })] });

      // The first step timed out; the payment opened (finding the order), authorized (finding the attempt) and settled.
      expect(await localActivitiesOf(app, blocked.id, result.submitOrderId)).toEqual([
        'tryFirstAttempt',
        'openOrderAndReserveAccount',
        'authorizeAttempt',
        'settlePaymentOrder',
        'recordPaymentOutcome',
      ]);
      expect(await authorizationsFor(result.submitOrderId)).toBe(1);
      // The timed-out first step went on once the row was free, and stopped before sending: Temporal had given it up.
      await vi.waitFor(() => expect(app.logs.text()).toContain(`Attempt ord${result.submitOrderId}-a1 not sent: its run was given up`), { timeout: 5_000 });
      const em = app.orm.em.fork();
      expect(await em.execute(`select success from transactions where order_id = ?`, [result.submitOrderId])).toEqual([{ success: true }]);
      const [volume] = await em.execute(
        `select v.reserved_amount::text as reserved from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.mid = ?`,
        [result.mid],
      );
      expect(volume, 'the cap reservation was released once, not held twice').toEqual({ reserved: '0.00' });
    } finally {
      if (locker.isInTransaction()) await locker.rollback();
    }
  }, 60_000);

  it('stores order details: campaign and affiliate by name, sub-affiliate split, props', async () => {
    const { body: result } = await submit(
      submitBody('4242424242424242', { campaignName: 'Spring', affiliateName: 'Partner X', subAffiliate: 'sub1_sub2', props: { plan: 'gold' }, trackerClickId: 'clk-1', ip: '203.0.113.9', useragent: 'UA/1' }),
    );
    const [order] = await app.orm.em.fork().execute(
      `select o.*, c.name as campaign, a.name as affiliate from orders o left join campaigns c on c.id = o.campaign_id left join affiliates a on a.id = o.affiliate_id where o.id = ?`,
      [result.submitOrderId],
    );
    expect(order).toMatchObject({ campaign: 'Spring', affiliate: 'Partner X', sub_affiliate_primary: 'sub1', sub_affiliate_secondary: 'sub2', props: { plan: 'gold' }, tracker_click_id: 'clk-1', ip: '203.0.113.9', user_agent: 'UA/1', state: 'approved' });
  });

  it('keeps the names as a search finds them: trimmed, in one Unicode form', async () => {
    const { body: result } = await submit(submitBody('4242424242424242', { address: { firstName: ' Ada\t', lastName: 'Lo\u0301pez ', country: 'ES' } }));
    expect(result.info).toBe('Success');
    const [row] = await app.orm.em.fork().execute(`select first_name, last_name from transactions where order_id = ?`, [result.submitOrderId]);
    expect(row).toEqual({ first_name: 'Ada', last_name: 'L\u00f3pez' });
  });

  it('refuses a name that is longer than 100 characters once composed (400 naming it), screening and writing nothing', async () => {
    // 99 letters and U+FB2C: 100 characters as sent, 102 as kept (NFC writes U+FB2C as three).
    const email = `long-name-${randomUUID()}@example.com`;
    const refused = await submit(submitBody('4242424242424242', { email, address: { firstName: 'a'.repeat(99) + '\uFB2C', country: 'ES' } }));
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('address.firstName');
    const [left] = await app.orm.em.fork().execute<{ attempts: number; transactions: number }[]>(
      `select (select count(*)::int from submit_attempts where email = ?) as attempts, (select count(*)::int from transactions where email = ?) as transactions`,
      [email, email],
    );
    expect(left).toEqual({ attempts: 0, transactions: 0 });
  });

  it('processes but does not persist a partnerSession over 50 characters', async () => {
    const long = 'p'.repeat(60);
    const { body: result } = await submit(submitBody('4242424242424242', { partnerSession: long }));
    expect(result).toMatchObject({ info: 'Success', partnerSession: long });
    const [order] = await app.orm.em.fork().execute(`select partner_session from orders where id = ?`, [result.submitOrderId]);
    expect(order!.partner_session).toBeNull();
  });

  it('takes a partnerSession of 1,000 characters of 3 bytes each, and keeps one of 50 characters that are 100 UTF-16 units', async () => {
    // 3,000 bytes: more than Temporal keeps in a search attribute's value (2 KB), which refused the start with a 500.
    const long = '€'.repeat(1000);
    const first = await submit(submitBody('4242424242424242', { partnerSession: long }));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ info: 'Success', partnerSession: long });
    const emoji = '🛒'.repeat(50);
    const { body: result } = await submit(submitBody('4242424242424242', { partnerSession: emoji }));
    expect(result).toMatchObject({ info: 'Success', partnerSession: emoji });
    const [order] = await app.orm.em.fork().execute(`select partner_session from orders where id = ?`, [result.submitOrderId]);
    expect(order!.partner_session).toBe(emoji);
  });
});

describe('a card network no merchant account takes', () => {
  it("fails as spec 7.1's '… cards not supported' when the product accepts it but no live account does; none with room is still None", async () => {
    const shop = await createMerchantTenant(app, { products: [oneOffProduct('both', '9.99', 'USD', { acceptedNetworks: ['NetworkA', 'NetworkB'] })], merchantAccounts: [merchantAccount('NET-A')] });
    await app.orm.em.fork().execute(`update merchant_accounts set enabled_network_b = false where tenant_id = ?`, [shop.id]);
    const networkB = await post(app, `/api/${shop.products.both}`, `Bearer ${shop.apiKey}`, submitBody('5555555555554444'));
    expect(networkB.body).toMatchObject({ info: 'Failed', error: 'NetworkB cards not supported', statusId: 0, chargeSuccess: false });
    expectFullShape(networkB.body);
    expect(await authorizationsFor(networkB.body.submitOrderId)).toBe(0);
    // Network A is taken: its card is charged.
    expect((await post(app, `/api/${shop.products.both}`, `Bearer ${shop.apiKey}`, submitBody('4242424242424242'))).body).toMatchObject({ info: 'Success' });
    // An account that takes the network but has no room is the accounts' matter, as before.
    await app.orm.em.fork().execute(`update merchant_accounts set enabled_network_b = true, monthly_cap = 1 where tenant_id = ?`, [shop.id]);
    expect((await post(app, `/api/${shop.products.both}`, `Bearer ${shop.apiKey}`, submitBody('5555555555554444'))).body).toMatchObject({ info: 'None' });
  });
});

describe('request-level errors', () => {
  it.each([
    ['malformed JSON', 400, '{"card": ', 'Invalid JSON body'],
    ['a body that is not an object', 400, '[1,2]', 'body must be object'],
    ['a wrong type', 400, JSON.stringify({ email: 42 }), 'email must be string'],
    ['an unknown field', 400, JSON.stringify({ surprise: true }), 'surprise is not a known field'],
    // Its two parts are kept in columns of 200: a longer one is refused before any order is written or limit counted.
    // Text no checkout could send is refused at the edge (a card's own rules are 7.1 outcomes, above).
    ['an e-mail of more than 1,024 characters', 400, JSON.stringify({ email: `${'a'.repeat(1100)}@example.com` }), 'email must NOT have more than 1024 characters'],
    ['a card number of more than 64 characters', 400, JSON.stringify({ card: { pan: '4'.repeat(65) } }), 'card.pan must NOT have more than 64 characters'],
    ['a subAffiliate part over 200 characters', 400, JSON.stringify({ subAffiliate: `a_${'b'.repeat(300)}` }), 'subAffiliate must match pattern "^[^_]{0,200}(_[\\s\\S]{0,200})?$"'],
  ])('%s is a %i', async (_name, status, body, message) => {
    const response = await submit(body);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ success: false, message });
  });

  it('an amount other than the price is 400 naming the price as its currency writes it, nothing charged', async () => {
    const usd = await submit({ ...submitBody('4242424242424242'), amount: 20 });
    expect(usd.body).toEqual({ success: false, message: 'amount must equal the product price 19.99' });
    const shop = await createMerchantTenant(app, { products: [oneOffProduct('yen', '1000', 'JPY')], merchantAccounts: [merchantAccount('YEN-PRICE', { currencies: [{ currency: 'JPY', gatewayCredentials: { apiKey: 'sandbox-yen' } }] })] });
    const yen = await submit({ ...submitBody('4242424242424242'), amount: 999 }, {}, shop.products.yen, `Bearer ${shop.apiKey}`);
    expect(yen.status).toBe(400);
    expect(yen.body).toEqual({ success: false, message: 'amount must equal the product price 1000' });
    const [orders] = await app.orm.em.fork().execute(`select count(*)::int as n from orders where tenant_id = ?`, [shop.id]);
    expect(orders).toEqual({ n: 0 });
  });

  it('401 without a key, 404 for an unknown product, 413 for a huge body', async () => {
    expect((await post(app, `/api/${tenant.productId}`, '', submitBody('4242424242424242'))).status).toBe(401);
    expect((await submit(submitBody('4242424242424242'), {}, 999999999)).status).toBe(404);
    // An id longer than any product's is just as unknown: 404, not a 400 about its length.
    for (const productId of ['1'.repeat(25), `shop-${'x'.repeat(300)}`]) {
      expect(await post(app, `/api/${productId}`, tenant.apiKey, submitBody('4242424242424242'))).toEqual({ status: 404, body: { success: false, message: `Product ${productId} not found` } });
    }
    expect((await submit(submitBody('4242424242424242', { props: { big: 'x'.repeat(70_000) } }))).status).toBe(413);
    // A props name is 1 to 100 characters, as documented: a longer or empty one is refused, and not echoed.
    for (const name of ['k'.repeat(101), '']) {
      const refused = await submit(submitBody('4242424242424242', { props: { [name]: 'v' } }));
      expect(refused.status, name).toBe(400);
      expect(JSON.stringify(refused.body)).toContain('props: a field name must NOT have');
      expect(JSON.stringify(refused.body)).not.toContain('k'.repeat(101));
    }
  });
});

describe('a card number typed into a field that is not the card', () => {
  /** The tables (of any tenant: the scan is cheap at test sizes) holding `text` anywhere in a row. */
  async function tablesHolding(text: string): Promise<string[]> {
    const em = app.orm.em.fork();
    const tables = await em.execute<{ tablename: string }[]>(`select tablename from pg_tables where schemaname = 'public'`);
    const holding: string[] = [];
    for (const { tablename } of tables) {
      const [row] = await em.execute<{ n: number }[]>(`select count(*)::int as n from "${tablename}" t where t::text like ?`, [`%${text}%`]);
      if (row!.n > 0) holding.push(tablename);
    }
    return holding;
  }

  it.each([
    ['address.firstName', { address: { firstName: '4111 1111 1111 1111', lastName: 'Lovelace' } }, '4111 1111 1111 1111'],
    ['shippingAddress.street', { shippingAddress: { street: 'card 4000056655665556 exp 12/30' } }, '4000056655665556'],
    ['card.name', { card: { ...card('4242424242424242'), name: '5555-5555-5555-4444' } }, '5555-5555-5555-4444'],
    ['address.street', { address: { street: 'card 4996.3148.6779.4771' } }, '4996.3148.6779.4771'],
  ])('%s: 400 naming the field, nothing kept, nothing logged', async (field, overrides, pan) => {
    const before = app.logs.lines.length;
    const refused = await submit(submitBody('4242424242424242', overrides), { 'idempotency-key': `pan-in-text-${randomUUID()}` });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ success: false, message: `${field} must not hold a card number` });
    expect(await tablesHolding(pan)).toEqual([]);
    expect(app.logs.lines.slice(before).filter((line) => line.includes(pan))).toEqual([]);
  });

  it('a phone holding one (more digits than a phone number has) is 400 naming phone', async () => {
    const refused = await submit(submitBody('4242424242424242', { phone: '4111-1111-1111-1111' }));
    expect(refused).toEqual({ status: 400, body: { success: false, message: 'phone must not hold a card number' } });
  });

  it('leaves names, addresses, phones and e-mails with numbers that are no card, or no longer than a phone number, as they are', async () => {
    // 4915112345678 and 1795747971749 pass Luhn: a phone number with its country code, a timestamp a merchant put in an address.
    const email = `guest+1795747971749-${randomUUID().slice(0, 4)}@shop.example`;
    const body = submitBody('4242424242424242', {
      email,
      phone: '+49 151 1234 5678',
      address: { firstName: 'Ada 2nd', lastName: 'Lovelace', street: 'Unit 1234567890123, 12 Main St', zip: '10001-1234' },
    });
    expect((await submit(body)).body).toMatchObject({ info: 'Success', email });
    // Refused for another reason, the e-mail is still echoed as sent.
    expect((await submit({ ...body, card: card('4242424242424241') })).body).toMatchObject({ error: 'Invalid CC Number', email });
  });

  it('an e-mail field holding one is Invalid Email, answered and kept with the number masked', async () => {
    const key = `pan-in-email-${randomUUID()}`;
    const body = submitBody('4242424242424242', { email: '4012888888881881' });
    const answer = await submit(body, { 'idempotency-key': key });
    expect(answer.body).toMatchObject({ info: 'Failed', error: 'Invalid Email', email: '401288******1881' });
    expect(await tablesHolding('4012888888881881')).toEqual([]);
    expect((await submit(body, { 'idempotency-key': key })).body).toEqual(answer.body);
  });
});

describe('Idempotency-Key', () => {
  it('is 1 to 255 printable ASCII characters: another byte (read as latin1) or an over-long key is 400, nothing charged', async () => {
    for (const key of ['clé-1', 'a\u00a0b', 'k'.repeat(256)]) {
      const refused = await submit(submitBody('4242424242424242'), { 'idempotency-key': key });
      expect(refused.status, key).toBe(400);
      expect(refused.body).toEqual({ success: false, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' });
    }
    expect((await submit(submitBody('4242424242424242'), { 'idempotency-key': `order 42/${randomUUID()}` })).body).toMatchObject({ info: 'Success' });
  });

  it('given twice (two header lines, which Node joins into one key) is 400, and neither key is kept', async () => {
    const keys = [`twice-a-${randomUUID()}`, `twice-b-${randomUUID()}`];
    const url = new URL(`/api/${tenant.productId}`, app.baseUrl);
    const answer = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const headers = ['host', url.host, 'content-type', 'application/json', 'authorization', `Bearer ${tenant.apiKey}`, 'idempotency-key', keys[0]!, 'idempotency-key', keys[1]!];
      const request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers }, (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk)).on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
      });
      request.on('error', reject).end(JSON.stringify(submitBody('4242424242424242')));
    });
    expect(answer).toEqual({ status: 400, body: { success: false, message: 'Idempotency-Key is given more than once; send one' } });
    const kept = await app.orm.em.fork().execute(`select key from idempotency_keys where key like ?`, [`%${keys[0]}%`]);
    expect(kept).toEqual([]);
  });

  it('returns the first result for the same key and body, sent ten times at once, with one payment and one authorization', async () => {
    const body = submitBody('4242424242424242');
    const key = { 'idempotency-key': `key-${randomUUID()}` };
    const together = await Promise.all(Array.from({ length: 10 }, () => submit(body, key)));
    const later = await submit(body, key);
    const answers = [...together, later];
    expect(answers.map((answer) => answer.status)).toEqual(Array(11).fill(200));
    const results = answers.map((r) => r.body);
    for (const result of results) expect(result).toEqual(results[0]);
    expect(results[0]).toMatchObject({ info: 'Success' });
    expect(await authorizationsFor(results[0]!.submitOrderId)).toBe(1);
    // One order and one payment workflow: the key's claim and the workflow id let no repeat start another.
    const [{ orders }] = (await app.orm.em.fork().execute(`select count(*)::int as orders from orders o join customers c on c.id = o.customer_id where o.tenant_id = ? and c.email = ?`, [tenant.id, body.email])) as [{ orders: number }];
    expect(orders).toBe(1);
    const conflict = await submit({ ...body, phone: '+100' }, key);
    expect(conflict.status).toBe(409);
  });

  it('lets a retry take over a key whose first request never started its payment', async () => {
    const body = submitBody('4242424242424242');
    const key = `key-abandoned-${randomUUID()}`;
    // What a request that died between claiming the key and starting its workflow leaves behind.
    const [reserved] = await app.orm.em.fork().execute<{ id: string }[]>(`select nextval('orders_id_seq') as id`);
    const id = reserved!.id;
    await app.orm.em.fork().execute(
      `insert into idempotency_keys (tenant_id, key, request_hash, submit_order_id, created_at) values (?, ?, ?, ?, now() - interval '1 minute')`,
      [tenant.id, key, requestHash(app.cardVault, String(tenant.productId), body as never), Number(id)],
    );
    const retry = await submit(body, { 'idempotency-key': key });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ info: 'Success', submitOrderId: Number(id) });
    expect(await authorizationsFor(Number(id))).toBe(1);
  });

  it('lets exactly one of several retries at once take over an abandoned key: one payment, screened once, one answer for all', async () => {
    const body = submitBody('4242424242424242');
    const key = `key-abandoned-${randomUUID()}`;
    const [reserved] = await app.orm.em.fork().execute<{ id: string }[]>(`select nextval('orders_id_seq') as id`);
    const id = Number(reserved!.id);
    await app.orm.em.fork().execute(
      `insert into idempotency_keys (tenant_id, key, request_hash, submit_order_id, created_at) values (?, ?, ?, ?, now() - interval '1 minute')`,
      [tenant.id, key, requestHash(app.cardVault, String(tenant.productId), body as never), id],
    );
    const retries = await Promise.all(Array.from({ length: 10 }, () => submit(body, { 'idempotency-key': key })));
    expect(retries.map((retry) => retry.status)).toEqual(Array(10).fill(200));
    for (const retry of retries) expect(retry.body).toEqual(retries[0]!.body);
    expect(retries[0]!.body).toMatchObject({ info: 'Success', submitOrderId: id });
    expect(await authorizationsFor(id)).toBe(1);
    // Screened (and counted against the e-mail's velocity) once, not once per retry.
    const [{ screened }] = (await app.orm.em.fork().execute(`select count(*)::int as screened from submit_attempts where tenant_id = ? and email = ?`, [tenant.id, body.email])) as [{ screened: number }];
    expect(screened).toBe(1);
  });

  it('replays a pre-processing outcome too', async () => {
    const body = submitBody('4242424242424241');
    const key = { 'idempotency-key': `key-bad-${randomUUID()}` };
    const first = await submit(body, key);
    const again = await submit(body, key);
    expect(again.body).toEqual(first.body);
    expect(first.body.error).toBe('Invalid CC Number');
  });
});

async function createSlowTenant(): Promise<PaymentTenant> {
  const slow = await createPaymentTenant(app);
  // .98 makes the sandbox answer after the 1 s processor timeout (see README: amount rules).
  await app.orm.em.fork().execute(`update products set price = '10.98' where id = ?`, [slow.productId]);
  return slow;
}
