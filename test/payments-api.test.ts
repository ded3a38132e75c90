import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createMerchantTenant, merchantAccount, oneOffProduct, submitBody, type MerchantTenant } from './support/payments.ts';
import { call, createPaymentsApiTenant, paymentBody } from './support/payments-api.ts';
import { startProcessorFront } from './support/processor-front.ts';
import { createTestTenant } from './support/tenants.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';
import { historyText } from './support/workflow-history.ts';
import { refuseRows } from './support/refusals.ts';

let app: TestApp;
let tenant: MerchantTenant;
let document: Record<string, unknown>;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
  tenant = await createPaymentsApiTenant(app);
  document = (await (await fetch(`${app.baseUrl}/openapi.json`)).json()) as Record<string, unknown>;
});
afterAll(() => app?.close());

const pay = (body: unknown, headers: Record<string, string> = {}, who: MerchantTenant = tenant) => call(app, 'POST', '/payments', who.apiKey, body, headers);
const get = (path: string, who: MerchantTenant = tenant) => call(app, 'GET', path, who.apiKey);
const orderOf = (id: string) => Number(id.slice('pay_'.length));

/** The real answer is one the OpenAPI document describes for that operation and status. */
function expectDocumented(pathName: string, method: string, status: number, body: unknown) {
  const pointer = `#/paths/${pathName.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/${status}/content/application~1json/schema`;
  const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false });
  ajv.addSchema(document, 'openapi.json');
  const validate = ajv.compile({ $ref: `openapi.json${pointer}` });
  expect(validate(body) ? [] : validate.errors, `${method.toUpperCase()} ${pathName} ${status}`).toEqual([]);
}

describe('POST /payments', () => {
  it('charges an approved card through the payment workflow and answers a Stripe-style payment', async () => {
    const created = await pay(paymentBody('4242424242424242'));
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^pay_\d+$/),
      object: 'payment',
      status: 'succeeded',
      amount: 1999,
      currency: 'USD',
      amount_refunded: 0,
      amount_refundable: 1999,
      refunded: false,
      status_id: 2636,
      failure_code: null,
      card: { brand: 'NetworkA', bin: '42424242', last4: '4242' },
      next_action: null,
    });
    expect([tenant.mids['PA-1'], tenant.mids['PA-2']]).toContain(created.body.mid);
    expect(JSON.stringify(created.body)).not.toContain('4242424242424242');
    expectDocumented('/payments', 'post', 200, created.body);
    expect(await authorizationsFor(orderOf(created.body.id))).toBe(1);

    const fetched = await get(`/payments/${created.body.id}`);
    expect(fetched).toEqual({ status: 200, body: created.body });
    expectDocumented('/payments/{id}', 'get', 200, fetched.body);
    expect(created.body.metadata).toEqual({});
  });

  it('shows the metadata kept on a payment in its answer, a later read and the list', async () => {
    const metadata = { order_ref: 'A-1001', 'line\nbreak': 'kept as given', note: '' };
    const created = await pay(paymentBody('4242424242424242', { metadata }));
    expect(created.body).toMatchObject({ status: 'succeeded', metadata });
    expect((await get(`/payments/${created.body.id}`)).body.metadata).toEqual(metadata);
    const listed = await get('/payments?limit=5');
    expect(listed.body.data.find((p: { id: string }) => p.id === created.body.id).metadata).toEqual(metadata);
    expectDocumented('/payments', 'get', 200, listed.body);
  });

  it('its product (price 0, holding /payments orders) is no checkout product: a submit to it is 404, nothing is charged', async () => {
    expect((await pay(paymentBody('4242424242424242'))).body.status).toBe('succeeded');
    const [product] = await app.orm.em.fork().execute<{ id: number }[]>(`select id from products where tenant_id = ? and slug = 'payments-api'`, [tenant.id]);
    const ordersOf = () => app.orm.em.fork().execute<{ count: string }[]>(`select count(*) from orders where product_id = ?`, [product!.id]);
    const before = await ordersOf();
    const submit = await fetch(`${app.baseUrl}/api/${product!.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: tenant.apiKey },
      body: JSON.stringify(submitBody('4242424242424242')),
    });
    expect(submit.status).toBe(404);
    expect(await ordersOf()).toEqual(before);
  });

  it('books a payment of a tenant provisioned with named applications only under its first one, never a 500', async () => {
    const mid = `APPS-${randomUUID().slice(0, 8)}`;
    const named = await createTestTenant(app, {
      applications: [
        { slug: 'shop', name: 'Shop' },
        { slug: 'store', name: 'Store' },
      ],
      merchantAccounts: [merchantAccount(mid, { monthlyCap: 1_000_000 })],
    });
    const paid = await call(app, 'POST', '/payments', named.apiKey, paymentBody('4242424242424242'));
    expect(paid).toMatchObject({ status: 200, body: { status: 'succeeded', amount: 1999, mid } });
    const [product] = await app.orm.em.fork().execute<{ application: string }[]>(
      `select a.slug as application from products p join applications a on a.id = p.application_id where p.tenant_id = ? and p.slug = 'payments-api'`,
      [named.id],
    );
    expect(product).toEqual({ application: 'shop' });
  });

  it('refuses a card number typed as the cardholder name (400 naming card.name), keeping nothing of it', async () => {
    const pan = '6011 0009 9013 9424';
    const refused = await pay(paymentBody('4242424242424242', { card: { number: '4242424242424242', exp_month: 12, exp_year: new Date().getFullYear() + 2, cvc: '123', name: pan } }));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({ type: 'invalid_request_error', code: 'parameter_invalid', message: 'card.name must not hold a card number', param: 'card.name' });
    const [held] = await app.orm.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from orders o where o::text like ?`, [`%${pan}%`]);
    expect(held!.n).toBe(0);
  });

  it('keeps the card number and CVC out of Temporal history, the logs and every table', async () => {
    const pan = '4242424242424242';
    const cvc = '987';
    const body = paymentBody(pan, { card: { number: pan, exp_month: 12, exp_year: new Date().getFullYear() + 2, cvc, name: 'Ada Lovelace' } });
    const created = await pay(body);
    expect(created.body.status).toBe('succeeded');
    const handle = app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, orderOf(created.body.id)));
    await handle.result();
    const history = await historyText(handle);
    // The search sees payloads: the payment's own e-mail is there.
    expect(history).toContain(body.email);
    expect(history).not.toContain(pan);
    expect(app.logs.lines.length).toBeGreaterThan(0);
    expect(app.logs.text()).not.toContain(pan);

    const em = app.orm.em.fork();
    const tables = await em.execute<{ tablename: string }[]>(`select tablename from pg_tables where schemaname = 'public'`);
    // Row ids (bigints read as text, `"987"`) are left out of the CVC's search: a row numbered like the CVC is no CVC.
    const withoutIds = (rows: Record<string, unknown>[]) => rows.map((row) => Object.fromEntries(Object.entries(row).filter(([column]) => column !== 'id' && !column.endsWith('_id'))));
    for (const { tablename } of tables) {
      const rows = await em.execute<Record<string, unknown>[]>(`select * from "${tablename}" where tenant_id = ?`, [tenant.id]).catch(() => em.execute<Record<string, unknown>[]>(`select * from "${tablename}"`));
      expect(JSON.stringify(rows), tablename).not.toContain(pan);
      expect(JSON.stringify(withoutIds(rows)), tablename).not.toContain(`"${cvc}"`);
    }
    expect(app.logs.text()).not.toContain(`"${cvc}"`);
  });

  it('answers a processed decline as a failed payment with its status code', async () => {
    const declined = await pay(paymentBody('4000000000000002'));
    expect(declined.status).toBe(200);
    expect(declined.body).toMatchObject({ status: 'failed', status_id: 3617, failure_code: '3617', failure_message: 'Declined', amount_refundable: 0 });
  });

  it('cascades a decline to a second merchant account when asked, like the submit route', async () => {
    const cascaded = await pay(paymentBody('4000000000000341', { cascade: true }));
    expect(cascaded.body).toMatchObject({ status: 'succeeded', status_id: 2636 });
    expect(await authorizationsFor(orderOf(cascaded.body.id))).toBe(2);
  });

  it('waits for 3-D Secure with a next_action the browser follows', async () => {
    const pending = await pay(paymentBody('4000000000003220', { three_d_secure: { enabled: true } }));
    expect(pending.body).toMatchObject({ status: 'requires_action', next_action: { type: 'three_d_secure', three_d_secure_id: expect.stringMatching(/^3ds_/) } });
    const redirect = await fetch(pending.body.next_action.redirect_url, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expectDocumented('/payments', 'post', 200, pending.body);
  });

  it('refuses invalid cards before processing with a card_error naming the parameter, and creates nothing', async () => {
    const before = await get('/payments?limit=100');
    const invalid = await pay(paymentBody('4242424242424241'));
    expect(invalid).toEqual({ status: 402, body: { error: { type: 'card_error', code: 'invalid_number', message: 'Invalid CC Number', param: 'card.number', status_id: 0 } } });
    expectDocumented('/payments', 'post', 402, invalid.body);
    // An expired card names the half of its expiry at fault: a past year, or this year's past month.
    const now = new Date();
    const card = (exp_month: number, exp_year: number) => ({ card: { number: '4242424242424242', exp_month, exp_year, cvc: '123' } });
    const lastYear = await pay(paymentBody('4242424242424242', card(12, now.getUTCFullYear() - 1)));
    expect(lastYear).toEqual({ status: 402, body: { error: { type: 'card_error', code: 'invalid_expiry', message: 'Invalid expiry', param: 'card.exp_year', status_id: 0 } } });
    const farAhead = await pay(paymentBody('4242424242424242', card(1, now.getUTCFullYear() + 26)));
    expect(farAhead.body.error).toMatchObject({ code: 'invalid_expiry', param: 'card.exp_year' });
    if (now.getUTCMonth() > 0) {
      const lastMonth = await pay(paymentBody('4242424242424242', card(now.getUTCMonth(), now.getUTCFullYear())));
      expect(lastMonth.body.error).toMatchObject({ code: 'invalid_expiry', param: 'card.exp_month' });
    }
    const after = await get('/payments?limit=100');
    expect(after.body.data).toEqual(before.body.data);
  });

  it('refuses malformed requests with invalid_request_error', async () => {
    const fractional = await pay(paymentBody('4242424242424242', { amount: 19.99 }));
    expect(fractional.status).toBe(400);
    expect(fractional.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'amount' });
    expectDocumented('/payments', 'post', 400, fractional.body);
    // A fraction past what a double holds reads as a whole number (1000): refused all the same, never charged rounded.
    const written = (amount: string) => JSON.stringify(paymentBody('4242424242424242')).replace('"amount":1999', `"amount":${amount}`);
    const paymentsOf = async () => (await app.orm.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from orders where tenant_id = ?`, [tenant.id]))[0]!.n;
    const before = await paymentsOf();
    for (const amount of ['999.99999999999999999', '9007199254740993', '1e-400']) {
      const rounded = await pay(written(amount));
      expect(rounded.status, amount).toBe(400);
      expect(rounded.body.error, amount).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'amount' });
    }
    // Nor is a text field given such a number taken as its text: a 19-digit card number sent as a JSON number.
    const numericCard = JSON.stringify(paymentBody('4242424242424242')).replace('"number":"4242424242424242"', '"number":4000000000000000001');
    const refusedCard = await pay(numericCard);
    expect(refusedCard.status).toBe(400);
    expect(refusedCard.body.error).toMatchObject({ type: 'invalid_request_error', param: 'card.number' });
    expect(JSON.stringify(refusedCard.body)).not.toContain('4000000000000000001');
    // Nor a field of another type: such a number as the metadata object is refused, naming it (found by the fuzz suite).
    const numericMetadata = await pay(JSON.stringify(paymentBody('4242424242424242')).replace(/}$/, ',"metadata":191001348519115070}'));
    expect(numericMetadata.status).toBe(400);
    expect(numericMetadata.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'metadata' });
    expect(await paymentsOf()).toBe(before);
    // A body opening with a byte order mark reads as without it, as on every route.
    expect((await pay(`\uFEFF${written('1999')}`)).body).toMatchObject({ status: 'succeeded', amount: 1999 });
    // A whole number however written is that number.
    const wholeWritten = await pay(written('1.999e3'));
    expect(wholeWritten.body).toMatchObject({ status: 'succeeded', amount: 1999 });

    const unknownField = await pay({ ...paymentBody('4242424242424242'), coupon: 'x' });
    expect(unknownField.body.error).toMatchObject({ type: 'invalid_request_error', param: 'coupon' });

    // A code that is no currency a card is charged in (a test code, a metal, a four-decimal unit of account, lower case).
    const beforeCurrencies = await paymentsOf();
    for (const currency of ['XXX', 'XTS', 'XAU', 'CLF', 'UYI', 'ABC', 'usd']) {
      const odd = await pay(paymentBody('4242424242424242', { currency }));
      expect(odd.status, currency).toBe(400);
      expect(odd.body.error, currency).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'currency', message: expect.stringContaining('ISO 4217') });
    }
    expect(await paymentsOf()).toBe(beforeCurrencies);

    // A metadata key is 1 to 40 characters, as documented.
    for (const key of ['k'.repeat(41), '']) {
      const refusedKey = await pay(paymentBody('4242424242424242', { metadata: { [key]: 'v' } }));
      expect(refusedKey.status, key).toBe(400);
      expect(refusedKey.body.error, key).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'metadata', message: expect.stringContaining('a field name must NOT have') });
    }
    expect((await pay(paymentBody('4242424242424242', { metadata: { ['k'.repeat(40)]: 'v' } }))).body).toMatchObject({ status: 'succeeded' });
    // A key holding a line break is a key like any other: its value is checked (it escaped the record's `.*` pattern).
    const brokenKey = await pay(paymentBody('4242424242424242', { metadata: { 'a\nb': { nested: true } } }));
    expect(brokenKey.status).toBe(400);
    expect(brokenKey.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid' });

    // Nesting thousands of levels deep is valid JSON too: told as too deep, not as malformed.
    const deep = await pay(`{"amount":1999,"currency":"USD","metadata":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`);
    expect(deep).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error', code: 'parameter_invalid', message: expect.stringContaining('nests objects or arrays too deeply') } } });
    expectDocumented('/payments', 'post', 400, deep.body);

    // A reserved key is valid JSON: named, not called malformed.
    const reserved = await pay('{"amount":1999,"currency":"USD","__proto__":{"x":1}}');
    expect(reserved.status).toBe(400);
    expect(reserved.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: '__proto__' });
    expectDocumented('/payments', 'post', 400, reserved.body);

    const notJson = await pay('{"amount":');
    expect(notJson).toEqual({ status: 400, body: { error: { type: 'invalid_request_error', code: 'invalid_json', message: 'The body is not valid JSON' } } });

    const nul = await pay(paymentBody('4242424242424242', { email: 'a\u0000@example.com' }));
    expect(nul.status).toBe(400);
    expect(nul.body.error).toMatchObject({ type: 'invalid_request_error', param: 'email' });

    const unknownMid = await pay(paymentBody('4242424242424242', { mid: 'NO-SUCH-MID' }));
    expect(unknownMid).toEqual({ status: 400, body: { error: { type: 'invalid_request_error', code: 'invalid_mid', message: 'Specified Mid not found', param: 'mid', status_id: 0 } } });

    // Names and e-mail addresses are held to what is kept: a longer name is no 404 for a payment never written, an
    // address longer once lower-cased (İ is two characters then) no 500.
    const longName = await pay(paymentBody('4242424242424242', { card: { ...paymentBody('4242424242424242').card, name: `Ada ${'B'.repeat(150)}` } }));
    expect(longName.status).toBe(400);
    expect(longName.body.error).toMatchObject({ type: 'invalid_request_error', param: 'card.name' });
    // 99 letters and U+FB2C are 100 characters as sent and 102 as kept (NFC writes U+FB2C as three): no 500.
    const composedLong = await pay(paymentBody('4242424242424242', { card: { ...paymentBody('4242424242424242').card, name: `${'a'.repeat(99)}\uFB2C` } }));
    expect(composedLong.status).toBe(400);
    expect(composedLong.body.error).toMatchObject({ type: 'invalid_request_error', param: 'card.name' });
    const screenedOf = async () => (await app.orm.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from submit_attempts where tenant_id = ?`, [tenant.id]))[0]!.n;
    const screened = await screenedOf();
    const composedAgain = await pay(paymentBody('4242424242424242', { card: { ...paymentBody('4242424242424242').card, name: `${'a'.repeat(99)}\uFB2C` } }));
    expect(composedAgain.status).toBe(400);
    // Refused before screening: no velocity slot taken.
    expect(await screenedOf()).toBe(screened);
    const growing = await pay(paymentBody('4242424242424242', { email: `${'İ'.repeat(300)}@example.com` }));
    expect(growing.status).toBe(400);
    expect(growing.body.error).toMatchObject({ code: 'invalid_email', param: 'email' });

    // The largest amount is told as an amount of the currency and in minor units, each number with its own unit.
    const tooLarge = await pay(paymentBody('4242424242424242', { amount: 99_999_999_999_990 }));
    expect(tooLarge).toEqual({
      status: 400,
      body: { error: { type: 'invalid_request_error', code: 'parameter_invalid', param: 'amount', message: 'amount must be at most 99999999999.99 USD, that is 9999999999999 in minor units (1999 for 19.99 USD)' } },
    });
    expectDocumented('/payments', 'post', 400, tooLarge.body);

    const noKey = await call(app, 'POST', '/payments', 'sk_test_unknown', paymentBody('4242424242424242'));
    expect(noKey.status).toBe(401);
    expect(noKey.body.error).toMatchObject({ type: 'authentication_error' });
    expectDocumented('/payments', 'post', 401, noKey.body);

    // Two keys (curl's two -H lines; fetch would join them into one header): refused, never served as the first's.
    const other = await createPaymentsApiTenant(app);
    const twoKeys = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const url = new URL('/payments', app.baseUrl);
      const request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers: ['host', url.host, 'authorization', `Bearer ${tenant.apiKey}`, 'authorization', `Bearer ${other.apiKey}`] }, (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk)).on('end', () => resolve({ status: response.statusCode!, body: text === '' ? undefined : JSON.parse(text) }));
      });
      request.on('error', reject).end();
    });
    expect(twoKeys).toEqual({ status: 401, body: { error: { type: 'authentication_error', code: 'invalid_api_key', message: 'Authorization is given more than once; send one API key' } } });
  });

  it("holds a merchant account's monthly cap per currency, never adding one currency's amounts to another's", async () => {
    const both = [
      { currency: 'USD', gatewayCredentials: { apiKey: 'sandbox-usd' } },
      { currency: 'EUR', gatewayCredentials: { apiKey: 'sandbox-eur' } },
    ];
    const capped = await createMerchantTenant(app, { products: [oneOffProduct('payments-api', '0.00')], merchantAccounts: [merchantAccount('CUR-1', { monthlyCap: 100, currencies: both })] });
    const payIn = (currency: string, amount: number) => pay(paymentBody('4242424242424242', { amount, currency }), {}, capped);
    expect((await payIn('EUR', 6000)).body.status).toBe('succeeded');
    // 60.00 USD fits the cap of 100 beside 60.00 EUR: each currency is counted in its own units.
    expect((await payIn('USD', 6000)).body.status).toBe('succeeded');
    // 50.00 EUR more would take the euros to 110. No attempt was made: the payment still shows the card it was sent.
    const refused = await payIn('EUR', 5000);
    expect(refused.body).toMatchObject({
      status: 'failed',
      mid: null,
      failure_code: 'no_merchant_account',
      failure_message: 'No merchant account could take the payment',
      card: { brand: 'NetworkA', bin: '42424242', last4: '4242', exp_month: 12, exp_year: new Date().getFullYear() + 2 },
    });
    expect((await get(`/payments/${refused.body.id}`, capped)).body).toEqual(refused.body);
    const volumes = await app.orm.em.fork().execute(
      `select v.currency, v.approved_amount, v.reserved_amount from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.mid = ? order by v.currency`,
      [capped.mids['CUR-1']],
    );
    expect(volumes).toEqual([
      { currency: 'EUR', approved_amount: '60.00', reserved_amount: '0.00' },
      { currency: 'USD', approved_amount: '60.00', reserved_amount: '0.00' },
    ]);

    // Where both currencies have room, each payment is reserved and counted on its own currency's row, to the cent.
    const roomy = await createMerchantTenant(app, { products: [oneOffProduct('payments-api', '0.00')], merchantAccounts: [merchantAccount('CUR-2', { monthlyCap: 100, currencies: both })] });
    for (const currency of ['EUR', 'USD']) expect((await pay(paymentBody('4242424242424242', { amount: 3000, currency }), {}, roomy)).body.status).toBe('succeeded');
    expect(
      await app.orm.em.fork().execute(
        `select v.currency, v.approved_amount, v.reserved_amount from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.mid = ? order by v.currency`,
        [roomy.mids['CUR-2']],
      ),
    ).toEqual([
      { currency: 'EUR', approved_amount: '30.00', reserved_amount: '0.00' },
      { currency: 'USD', approved_amount: '30.00', reserved_amount: '0.00' },
    ]);
  });

  it("takes amounts in the currency's own minor units: 500 JPY is 500 yen, 1230 KWD is 1.230 dinars, and refunds and lists so", async () => {
    const currencies = ['USD', 'JPY', 'KWD', 'ISK'].map((currency) => ({ currency, gatewayCredentials: { apiKey: `sandbox-${currency.toLowerCase()}` } }));
    const shop = await createMerchantTenant(app, { products: [oneOffProduct('payments-api', '0.00')], merchantAccounts: [merchantAccount('MINOR-1', { currencies })] });
    const payIn = (currency: string, amount: number) => pay(paymentBody('4242424242424242', { amount, currency }), {}, shop);
    const chargedOf = async (id: string) =>
      app.orm.em.fork().execute(`select amount, currency from transactions where order_id = ? and success and kind = 'authorization'`, [orderOf(id)]);

    const yen = await payIn('JPY', 500);
    expect(yen.body).toMatchObject({ status: 'succeeded', amount: 500, currency: 'JPY', amount_refundable: 500 });
    expect(await chargedOf(yen.body.id)).toEqual([{ amount: '500.00', currency: 'JPY' }]);
    const dinars = await payIn('KWD', 1230);
    expect(dinars.body).toMatchObject({ status: 'succeeded', amount: 1230, currency: 'KWD' });
    expect(await chargedOf(dinars.body.id)).toEqual([{ amount: '1.23', currency: 'KWD' }]);
    expectDocumented('/payments', 'post', 200, dinars.body);
    // The gateway charges hundredths: a thousandth of a dinar it cannot charge is refused, not rounded.
    const tooManyYen = await payIn('JPY', 100_000_000_000);
    expect(tooManyYen.body.error).toMatchObject({ param: 'amount', message: 'amount must be at most 99999999999 JPY, that is 99999999999 in minor units (500 for 500 JPY)' });
    // Past any currency's largest, and past 2^53: the same currency's own limit, never another currency's figure.
    for (const amount of [100_000_000_000_000, 1e20]) {
      const farTooManyYen = await payIn('JPY', amount);
      expect(farTooManyYen.status).toBe(400);
      expect(farTooManyYen.body.error).toMatchObject({ param: 'amount', message: 'amount must be at most 99999999999 JPY, that is 99999999999 in minor units (500 for 500 JPY)' });
    }
    const odd = await payIn('KWD', 1234);
    expect(odd.status).toBe(400);
    expect(odd.body.error).toMatchObject({ type: 'invalid_request_error', param: 'amount', message: 'amount in KWD must end in 0: the gateway charges whole hundredths (1230 for 1.230 KWD)' });
    // ISK counts hundredths (Stripe's API) but only whole krónur can be paid: 150 (1.50 ISK) is refused, nothing charged.
    const krona = await payIn('ISK', 150);
    expect(krona.status).toBe(400);
    expect(krona.body.error).toMatchObject({ type: 'invalid_request_error', param: 'amount', message: 'amount in ISK must end in 00: ISK is charged in whole units (50000 for 500 ISK)' });

    const dinarRefund = await call(app, 'POST', `/payments/${dinars.body.id}/refund`, shop.apiKey, { amount: 230 });
    expect(dinarRefund.body).toMatchObject({ object: 'refund', amount: 230, currency: 'KWD', status: 'succeeded' });
    expect((await get(`/payments/${dinars.body.id}`, shop)).body).toMatchObject({ amount: 1230, amount_refunded: 230, amount_refundable: 1000 });
    const refund = await call(app, 'POST', `/payments/${yen.body.id}/refund`, shop.apiKey, { amount: 200 });
    expect(refund.body).toMatchObject({ object: 'refund', amount: 200, currency: 'JPY', status: 'succeeded' });
    expect((await get(`/payments/${yen.body.id}`, shop)).body).toMatchObject({ amount: 500, amount_refunded: 200, amount_refundable: 300 });
    const tooMuch = await call(app, 'POST', `/payments/${yen.body.id}/refund`, shop.apiKey, { amount: 301 });
    expect(tooMuch.body.error.message).toBe('Credit Exceeds Original Amount: at most 300 can still be refunded');

    // A list bound is in each payment's own minor units: 700 takes 5.00 USD and 500 yen, not 1.230 dinars.
    const dollars = await payIn('USD', 500);
    const listed = await get('/payments?amount[lte]=700', shop);
    expect(listed.body.data.map((p: { id: string }) => p.id)).toEqual([dollars.body.id, yen.body.id]);
    const above = (await get('/payments?amount[gte]=1000', shop)).body.data.map((p: { id: string }) => p.id);
    expect(above).toEqual([dinars.body.id]);

    // A plan in yen: the subscription's amount is whole yen too.
    const planned = await createMerchantTenant(app, {
      products: [oneOffProduct('yen-plan', '500.00', 'JPY', { subscriptionPlan: { recurringAmount: '300.00', intervalDays: 30, intervalSeconds: 3600, trialSeconds: 0 } })],
      merchantAccounts: [merchantAccount('MINOR-2', { currencies })],
    });
    const checkout = await fetch(`${app.baseUrl}/api/${planned.products['yen-plan']}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: planned.apiKey },
      body: JSON.stringify(submitBody('4242424242424242')),
    });
    const subscribed = (await checkout.json()) as { subscribeSuccess: boolean; subscriptionId: number };
    expect(subscribed.subscribeSuccess).toBe(true);
    expect((await get(`/subscriptions/${subscribed.subscriptionId}`, planned)).body).toMatchObject({ amount: 300, currency: 'JPY' });
  });

  it('forces a merchant account given as mid', async () => {
    const forced = await pay(paymentBody('4242424242424242', { mid: tenant.mids['PA-2'] }));
    expect(forced.body).toMatchObject({ status: 'succeeded', mid: tenant.mids['PA-2'] });
  });

  it('answers a repeated Idempotency-Key with the first payment and never charges twice; another body is a conflict', async () => {
    const body = paymentBody('4242424242424242');
    const key = `key-${Date.now()}`;
    const answers = await Promise.all(Array.from({ length: 5 }, () => pay(body, { 'Idempotency-Key': key })));
    const ids = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    for (const answer of answers) if (answer.status !== 200) expect(answer.body.error.type).toBe('idempotency_error');
    expect(await authorizationsFor(orderOf(id!))).toBe(1);
    const again = await pay(body, { 'Idempotency-Key': key });
    expect(again.body.id).toBe(id);

    const other = await pay({ ...body, amount: 2999 }, { 'Idempotency-Key': key });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    expectDocumented('/payments', 'post', 409, other.body);

    // A key is printable ASCII: `é` (read as latin1) is refused, not kept as another key than its UTF-8 spelling.
    const accented = await pay(body, { 'Idempotency-Key': 'clé-1' });
    expect(accented.status).toBe(400);
    expect(accented.body.error).toMatchObject({ type: 'invalid_request_error', param: 'Idempotency-Key' });
    expectDocumented('/payments', 'post', 400, accented.body);
  });
});

describe('GET /payments', () => {
  it('filters by status, amount, e-mail, MID and creation time, and pages with starting_after', async () => {
    const lister = await createPaymentsApiTenant(app);
    const email = 'lister@example.com';
    const made: string[] = [];
    for (const [number, amount] of [['4242424242424242', 1000], ['4000000000000002', 2000], ['4242424242424242', 3000], ['4242424242424242', 4000]] as const) {
      const created = await pay(paymentBody(number, { amount, email, mid: lister.mids['PA-1'] }), {}, lister);
      made.push(created.body.id);
    }
    await pay(paymentBody('4242424242424242', { amount: 5000, mid: lister.mids['PA-2'] }), {}, lister);

    const all = await get('/payments?limit=100', lister);
    expect(all.body).toMatchObject({ object: 'list', url: '/payments', has_more: false });
    expect(all.body.data).toHaveLength(5);
    expectDocumented('/payments', 'get', 200, all.body);

    const ids = (path: string) => get(path, lister).then((r) => r.body.data.map((p: { id: string }) => p.id));
    expect(await ids('/payments?status=failed')).toEqual([made[1]]);
    expect(await ids(`/payments?email=LISTER@example.com&status=succeeded`)).toEqual([made[3], made[2], made[0]]);
    // Lower-cased as the payment's e-mail was (JavaScript's rules): PostgreSQL's lower() turns a final Σ into σ, not ς.
    const greek = `ΟΔΟΣ${Date.now()}@example.com`;
    const paidInGreek = await pay(paymentBody('4242424242424242', { email: greek }));
    expect(paidInGreek.status).toBe(200);
    expect((await get(`/payments?email=${encodeURIComponent(greek)}`)).body.data.map((p: { id: string }) => p.id)).toEqual([paidInGreek.body.id]);
    expect(await ids('/payments?amount[gte]=2000&amount[lte]=3000')).toEqual([made[2], made[1]]);
    expect(await ids(`/payments?mid=${lister.mids['PA-2']}`)).toHaveLength(1);
    const now = Math.floor(Date.now() / 1000);
    expect(await ids(`/payments?created[gte]=${now - 600}&created[lte]=${now + 5}`)).toHaveLength(5);
    expect(await ids(`/payments?created[gte]=${now + 600}`)).toEqual([]);

    const first = await get('/payments?limit=2', lister);
    expect(first.body.has_more).toBe(true);
    const second = await get(`/payments?limit=2&starting_after=${first.body.data[1].id}`, lister);
    const third = await get(`/payments?limit=2&starting_after=${second.body.data[1].id}`, lister);
    expect(third.body.has_more).toBe(false);
    expect([...first.body.data, ...second.body.data, ...third.body.data].map((p) => p.id)).toEqual(all.body.data.map((p: { id: string }) => p.id));

    const bad = await get('/payments?limit=101', lister);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid' });
    expectDocumented('/payments', 'get', 400, bad.body);
    const unknownStatus = await get('/payments?status=bogus', lister);
    expect(unknownStatus.body.error).toEqual({
      type: 'invalid_request_error',
      code: 'parameter_invalid',
      param: 'status',
      message: 'status must be one of: processing, requires_action, requires_capture, succeeded, failed, canceled',
    });
    // A parameter given twice is named as such, never read as either value.
    for (const query of ['limit=10&limit=20', 'status=succeeded&status=failed']) {
      const twice = await get(`/payments?${query}`, lister);
      const param = query.slice(0, query.indexOf('='));
      expect(twice.body.error).toEqual({ type: 'invalid_request_error', code: 'parameter_invalid', param, message: `${param} is given more than once; give it once` });
    }
  });

  it('counts a payment made in the last instant of a second in that second, as `created` shows it', async () => {
    const edge = await createPaymentsApiTenant(app);
    const made = await pay(paymentBody('4242424242424242'), {}, edge);
    await app.orm.em.fork().execute(`update orders set created_at = to_timestamp(1700000000.9995) where id = ?`, [orderOf(made.body.id)]);
    expect((await get(`/payments/${made.body.id}`, edge)).body.created).toBe(1700000000);
    const found = await get('/payments?created[gte]=1700000000&created[lte]=1700000000', edge);
    expect(found.body.data.map((p: { id: string }) => p.id)).toEqual([made.body.id]);
    expect((await get('/payments?created[gte]=1700000001', edge)).body.data).toEqual([]);
  });

  it("never shows or refunds another tenant's payment", async () => {
    const other = await createPaymentsApiTenant(app);
    const mine = await pay(paymentBody('4242424242424242'));
    const peek = await get(`/payments/${mine.body.id}`, other);
    expect(peek).toEqual({ status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment: '${mine.body.id}'`, param: 'id' } } });
    expectDocumented('/payments/{id}', 'get', 404, peek.body);
    const listed = await get('/payments?limit=100', other);
    expect(listed.body.data.map((p: { id: string }) => p.id)).not.toContain(mine.body.id);
    // Another tenant's payment is no cursor either (nor one that does not exist): 404, as a refund list's cursor.
    for (const cursor of [mine.body.id, 'pay_999999999']) {
      const paged = await get(`/payments?starting_after=${cursor}`, other);
      expect(paged, cursor).toEqual({ status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment: '${cursor}'`, param: 'starting_after' } } });
      expectDocumented('/payments', 'get', 404, paged.body);
    }
    const refund = await call(app, 'POST', `/payments/${mine.body.id}/refund`, other.apiKey, {});
    expect(refund.status).toBe(404);
    const still = await get(`/payments/${mine.body.id}`);
    expect(still.body).toMatchObject({ amount_refunded: 0, amount_refundable: 1999 });
    expect((await get('/payments/not-an-id')).status).toBe(404);
  });
});

describe('GET /payments with dates no calendar holds', () => {
  it('answers 400 on the date filter, never 500, for a date past year 9999; 9999-12-31 itself is accepted', async () => {
    for (const query of ['created[gte]=10000000000000', 'created[lte]=10000000000000', 'created[gte]=8640000000001', 'created[gte]=253402300800']) {
      const answer = await get(`/payments?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error, query).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: query.slice(0, query.indexOf('=')) });
      expectDocumented('/payments', 'get', 400, answer.body);
    }
    const latest = await get('/payments?created[gte]=253402300799&created[lte]=253402300799');
    expect(latest).toMatchObject({ status: 200, body: { data: [], has_more: false } });
  });
});

/**
 * A held authorization (`capture: false`) that ends without a capture: its void is its own transaction (spec 2.8), and
 * the payment shows that transaction's status in every answer, as the `transaction.updated` webhook tells it, never
 * the authorization's 3367 Preauthorized.
 */
describe('a held authorization that ends canceled', () => {
  const secret = generateWebhookSecret();
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  beforeAll(async () => {
    receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
  });
  afterAll(() => receiver?.close());

  /** A tenant told of every `transaction.updated`. */
  const hookedTenant = (on: TestApp) =>
    createTestTenant(on, {
      products: [oneOffProduct('payments-api', '0.00')],
      merchantAccounts: [merchantAccount(`HELD-${randomUUID().slice(0, 8)}`, { monthlyCap: 1_000_000 })],
      webhookEndpoints: [{ slug: 'updates', url: receiver.url, secret, eventTypes: ['transaction.updated'] }],
    });
  const updatesOf = (paymentId: string) =>
    receiver.received.map((hook) => hook.payload as { type: string; data: { paymentId: string; change: string; statusId: number } }).filter((hook) => hook.data.paymentId === paymentId);

  it("voided on request: the void's status 4166 in its answer, a later read and the list, as its webhook says", async () => {
    const hooked = await hookedTenant(app);
    const ask = (method: 'GET' | 'POST', path: string, body?: unknown) => call(app, method, path, hooked.apiKey, body);
    const held = await ask('POST', '/payments', paymentBody('4242424242424242', { capture: false }));
    expect(held.body).toMatchObject({ status: 'requires_capture', status_id: 3367 });

    const voided = await ask('POST', `/payments/${held.body.id}/void`);
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({
      status: 'canceled',
      status_id: 4166,
      transaction_id: held.body.transaction_id,
      failure_code: null,
      failure_message: 'The authorization was voided before capture',
      amount_refundable: 0,
    });
    expectDocumented('/payments/{id}/void', 'post', 200, voided.body);
    expect((await ask('GET', `/payments/${held.body.id}`)).body).toEqual(voided.body);
    expect((await ask('GET', '/payments?status=canceled')).body.data).toEqual([voided.body]);
    await vi.waitFor(() => expect(updatesOf(held.body.id)).toEqual([expect.objectContaining({ type: 'transaction.updated', data: expect.objectContaining({ change: 'voided', statusId: 4166 }) })]), {
      timeout: 15_000,
      interval: 250,
    });
  });

  it("expired when the processor refuses its void: the refusal's status 4175 in every read, as its webhook says", async () => {
    // A processor refusing every void (401) while it still holds the authorization: the hold ends `expired` at once.
    const front = await startProcessorFront(inject('sandboxProcessorUrl'), { refusedVoids: true });
    const refusing = await startTestApp({ SANDBOX_PROCESSOR_URL: front.url, AUTHORIZATION_VOID_AFTER_SECONDS: '3600' });
    try {
      await refusing.startWorker();
      const hooked = await hookedTenant(refusing);
      const ask = (method: 'GET' | 'POST', path: string, body?: unknown) => call(refusing, method, path, hooked.apiKey, body);
      const held = await ask('POST', '/payments', paymentBody('4242424242424242', { capture: false }));
      expect(held.body).toMatchObject({ status: 'requires_capture', status_id: 3367 });

      const refused = await ask('POST', `/payments/${held.body.id}/void`);
      expect(refused.status).toBe(402);
      expect(refused.body.error).toMatchObject({ code: 'void_declined', status_id: 4175 });
      const read = await ask('GET', `/payments/${held.body.id}`);
      expect(read.body).toMatchObject({ status: 'canceled', status_id: 4175, failure_message: 'The authorization expired at the processor before capture', amount_refundable: 0 });
      expect((await ask('GET', '/payments?status=canceled')).body.data).toEqual([read.body]);
      await vi.waitFor(() => expect(updatesOf(held.body.id)).toEqual([expect.objectContaining({ data: expect.objectContaining({ change: 'expired', statusId: 4175 }) })]), {
        timeout: 15_000,
        interval: 250,
      });
    } finally {
      await refusing.close();
      await front.close();
    }
  });
});

describe('PostgreSQL away', () => {
  // The payment's answer is the one of any change asked while the database is away: the gateway cannot tell how far
  // the request got (here, not past its key), so the caller is told to get the outcome with its key.
  it('answers a read 503 `service_unavailable` (it changed nothing) and a payment 503 `still_processing` (get its outcome with the key)', async () => {
    const own = await createPaymentsApiTenant(app);
    const keyIds = await app.orm.em.fork().execute<{ id: number }[]>(`select id from api_keys where tenant_id = ?`, [own.id]);
    // 57P03, "cannot connect now", where the key's admission writes its rate-limit window.
    const allow = await refuseRows(app.orm, 'rate_limit_windows', 'insert', `new.subject in (${keyIds.map(({ id }) => `'api-key:${id}'`).join(', ')})`, '57P03');
    let read: Awaited<ReturnType<typeof get>>;
    let payment: Awaited<ReturnType<typeof pay>>;
    try {
      read = await get('/payments', own);
      payment = await pay(paymentBody('4242424242424242'), { 'idempotency-key': randomUUID() }, own);
    } finally {
      await allow();
    }
    expect(read).toMatchObject({ status: 503, body: { error: { type: 'api_error', code: 'service_unavailable', message: 'The database could not be reached; nothing was changed. Ask again shortly' } } });
    expectDocumented('/payments', 'get', 503, read.body);
    expect(payment).toMatchObject({ status: 503, body: { error: { type: 'api_error', code: 'still_processing', message: expect.stringContaining('with the same idempotency key') } } });
    expect((await get('/payments', own)).status).toBe(200);
  });
});
