import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { merchantAccount } from './support/payments.ts';
import { createTestTenant, type TestTenant } from './support/tenants.ts';
import { refuseRows } from './support/refusals.ts';
import { undocumentedParts } from './support/openapi-answers.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { updateMerchantAccountAtVersion } from '../data/queries/merchant-account-admin.ts';

let app: TestApp;
let acme: TestTenant;
let child: TestTenant;
let other: TestTenant;
let midSuffix: string;

/** The fields of spec 2.6, exactly. */
const SPEC_FIELDS = [
  'id', 'mid', 'title', 'companyId', 'agent', 'acquiringBank', 'gatewayId', 'enabledNetworkB', 'enabledNetworkA', 'descriptor', 'mcc',
  'acquirerBINNetworkA', 'acquirerBINNetworkB', 'psp', 'maxPrice', 'verticalId', 'monthlyCap', 'reservePercentage', 'discountRatePercentage',
  'gatewayTransactionFee', 'chargebackFee', 'routingNumber', 'accountNumber', 'brandId', 'allowPremiumProgram', 'fullyLive', 'shorthandSuffix',
  'defaultCurrency', 'rdrFee', 'alertFee', 'cdrnFee', 'allowRetriesFromOtherMids', 'allowInsufficientFundsRetries', 'capLimited', 'forceAllowRefunds',
  'dynamicDescriptorEnabled', 'dynamicDescriptorPrefix', 'dynamicDescriptorPrefix_NetworkB', 'dynamicDescriptorFormat', 'bankAuthFee', 'bankDeclineFee',
  'bankAVSFee', 'customFee', 'customFeeApprovedOnly', 'notes', 'caid', 'chargebackMitigationProviderId', 'chargebackMitigationNotes',
  'processorPortalAccessId', 'rowVersion', 'merchantDefinedField1', 'merchantDefinedField2', 'merchantDefinedField3', 'customField1', 'customField2',
  'customField3', 'midOwnerId', 'currencies', 'company', 'gateway', 'vertical', 'brand', 'chargebackMitigationProvider', 'processorPortalAccess',
  'parentCompany', 'parentCompanyId', 'requiresZip', 'partnerStoreId',
].sort();

const SECRET_API_KEY = 'sk_processor_live_9f8e7d6c5b4a3210';
const SECRET_PASSWORD = 'hunter2-correct-horse';

beforeAll(async () => {
  app = await startTestApp();
  midSuffix = randomUUID().slice(0, 8);
  acme = await createTestTenant(app, {
    // Every refused request counts against the key's rate limit, and this suite sends many.
    rateLimitPerMinute: 10_000,
    merchantAccounts: [
      merchantAccount(`ACME-1-${midSuffix}`, {
        reservePercentage: '0.1',
        discountRatePercentage: 0.035,
        capLimited: '2026-01-02T03:04:05.000Z',
        brandId: 7,
        brand: 'Acme Brand',
        verticalId: 3,
        vertical: 'Nutra',
        chargebackFee: '25.50',
        currencies: [
          { currency: 'USD', gatewayCredentials: { apiKey: SECRET_API_KEY, username: 'acme-user', password: SECRET_PASSWORD } },
          { currency: 'EUR', gatewayCredentials: { apiKey: 'abc' } },
        ],
      }),
      merchantAccount(`ACME-2-${midSuffix}`, { fullyLive: false, brandId: 8, brand: 'Other Brand' }),
    ],
  });
  child = await createTestTenant(app, { merchantAccounts: [merchantAccount(`CHILD-1-${midSuffix}`)] });
  other = await createTestTenant(app, { merchantAccounts: [merchantAccount(`OTHER-1-${midSuffix}`)] });
  await app.orm.em.fork().execute(`update tenants set parent_tenant_id = ? where id = ?`, [acme.id, child.id]);
});
afterAll(() => app?.close());

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${app.baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const list = (tenant: TestTenant, headers = tenant.adminHeaders) => call('GET', '/api/admin/merchantaccounts', headers);
const put = (tenant: TestTenant, id: number, body: unknown, headers = tenant.adminHeaders) => call('PUT', `/api/admin/merchantaccounts/${id}`, headers, body);

async function accountOf(tenant: TestTenant, midPrefix: string): Promise<Record<string, any>> {
  const { body } = await list(tenant);
  return body.returnVal.find((a: any) => a.mid.startsWith(midPrefix));
}

async function storedRow(id: number) {
  const [row] = await app.orm.em.fork().execute<Record<string, any>[]>(`select * from merchant_accounts where id = ?`, [id]);
  return row!;
}

async function auditCount(id: number): Promise<number> {
  const [row] = await app.orm.em.fork().execute<{ n: string }[]>(`select count(*) as n from audit_entries where entity_type = 'MerchantAccount' and entity_id = ? and action = 'merchant_account.updated'`, [String(id)]);
  return Number(row!.n);
}

/** The account's stored currencies and their sealed credentials, as the database holds them. */
async function storedCurrencies(id: number) {
  return app.orm.em.fork().execute<Record<string, any>[]>(`select * from merchant_account_currencies where merchant_account_id = ? order by currency`, [id]);
}

/** PostgreSQL refusing the rows `when` selects (see `refuseRows`), until the returned function is called. */
const refuse = (table: string, event: 'insert' | 'update at commit', when: string) => refuseRows(app.orm, table, event, when);

async function graphql(tenant: TestTenant, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as Record<string, any>;
}

describe('GET /api/admin/merchantaccounts', () => {
  it('refuses a query parameter (it has no filters) rather than answering every account as if filtered', async () => {
    const { status, body } = await call('GET', '/api/admin/merchantaccounts?live=false', acme.adminHeaders);
    expect(status).toBe(400);
    expect(body).toEqual({ success: false, message: 'live is not a known field' });
  });

  it('answers every field of spec 2.6 with its type, names resolved, percentages as fractions, credentials masked', async () => {
    const { status, body } = await list(acme);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['returnVal', 'success']);
    expect(body.success).toBe(true);
    const account = body.returnVal.find((a: any) => a.mid === `ACME-1-${midSuffix}`);
    expect(Object.keys(account).sort()).toEqual(SPEC_FIELDS);
    expect(account).toMatchObject({
      companyId: acme.id,
      company: expect.stringMatching(/^Tenant /),
      gateway: 'sandbox',
      reservePercentage: 0.1,
      discountRatePercentage: 0.035,
      chargebackFee: 25.5,
      maxPrice: 1000,
      capLimited: '2026-01-02T03:04:05.000Z',
      brandId: 7,
      brand: 'Acme Brand',
      verticalId: 3,
      vertical: 'Nutra',
      rowVersion: 1,
      midOwnerId: 0,
      parentCompanyId: null,
      // The sandbox adapter's stable id: never null beside a gateway name.
      gatewayId: 1,
    });
    expect(body.returnVal.every((a: any) => a.gateway === 'sandbox' && a.gatewayId === 1)).toBe(true);
    // Every credential field of spec 2.6 is named, null where none is stored; one under 12 characters (`acme-user`)
    // shows no tail, which would be half of it.
    expect(account.currencies).toEqual([
      { currency: 'EUR', gatewayCredentials: { apiKey: '****', username: null, password: null, emailAddress: null, processorId: null } },
      { currency: 'USD', gatewayCredentials: { apiKey: '****3210', username: '****', password: '****orse', emailAddress: null, processorId: null } },
    ]);
    expect(JSON.stringify(body)).not.toContain(SECRET_API_KEY);
    expect(JSON.stringify(body)).not.toContain(SECRET_PASSWORD);
  });

  it('keeps gateway credentials encrypted at rest', async () => {
    const rows = await app.orm.em.fork().execute<{ credentials_ciphertext: string }[]>(
      `select c.credentials_ciphertext from merchant_account_currencies c join merchant_accounts m on m.id = c.merchant_account_id where m.mid = ?`,
      [`ACME-1-${midSuffix}`],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.credentials_ciphertext).toMatch(/^v1\./);
      expect(row.credentials_ciphertext).not.toContain(SECRET_API_KEY);
    }
  });

  it("lists the tenant's and its child companies' accounts, never another tenant's; a child does not see its parent's", async () => {
    const mids = (await list(acme)).body.returnVal.map((a: any) => a.mid).sort();
    expect(mids).toEqual([`ACME-1-${midSuffix}`, `ACME-2-${midSuffix}`, `CHILD-1-${midSuffix}`].sort());
    const childAccount = (await list(acme)).body.returnVal.find((a: any) => a.mid === `CHILD-1-${midSuffix}`);
    expect(childAccount).toMatchObject({ companyId: child.id, parentCompanyId: acme.id, parentCompany: expect.stringMatching(/^Tenant /) });
    expect((await list(child)).body.returnVal.map((a: any) => a.mid)).toEqual([`CHILD-1-${midSuffix}`]);
    expect((await list(other)).body.returnVal.map((a: any) => a.mid)).toEqual([`OTHER-1-${midSuffix}`]);
  });

  it('refuses a missing key (401), another tenant\'s ClientId (403) and a missing UserEmail (400)', async () => {
    expect((await list(acme, { clientid: acme.clientId, useremail: 'a@example.com' })).status).toBe(401);
    expect((await list(acme, { ...acme.adminHeaders, clientid: other.clientId })).status).toBe(403);
    const { useremail: _drop, ...noEmail } = acme.adminHeaders;
    const missing = await list(acme, noEmail);
    expect(missing).toEqual({ status: 400, body: { success: false, message: 'Missing UserEmail header' } });
  });
});

describe('PUT /api/admin/merchantaccounts/{id}', () => {
  it('updates the fields sent, keeps the others, increments rowVersion and audits who changed what', async () => {
    const before = await accountOf(acme, 'ACME-2-');
    const { status, body } = await put(acme, before.id, { rowVersion: before.rowVersion, title: 'Renamed', maxPrice: 250.5, reservePercentage: 0.15, notes: null, capLimited: '2026-03-01T00:00:00Z' }, { ...acme.adminHeaders, useremail: 'ops.lead@example.com' });
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['message', 'returnVal', 'success']);
    expect(body).toMatchObject({ success: true, message: 'Merchant account updated' });
    expect(body.returnVal).toEqual({ ...before, title: 'Renamed', maxPrice: 250.5, reservePercentage: 0.15, notes: null, capLimited: '2026-03-01T00:00:00.000Z', rowVersion: before.rowVersion + 1 });
    expect(await accountOf(acme, 'ACME-2-')).toEqual(body.returnVal);

    const [entry] = await app.orm.em.fork().execute<Record<string, any>[]>(
      `select actor, action, changes, tenant_id from audit_entries where entity_type = 'MerchantAccount' and entity_id = ? order by id desc limit 1`,
      [String(before.id)],
    );
    expect(entry).toMatchObject({ actor: 'ops.lead@example.com', action: 'merchant_account.updated', tenant_id: acme.id });
    expect(entry!.changes).toEqual({
      title: { before: before.title, after: 'Renamed' },
      maxPrice: { before: '1000.00', after: '250.50' },
      reservePercentage: { before: null, after: '0.1500' },
      capLimited: { before: null, after: '2026-03-01T00:00:00.000Z' },
      rowVersion: { before: before.rowVersion, after: before.rowVersion + 1 },
    });
  });

  it('audits a UserEmail written in UTF-8 as its person wrote it, and refuses bytes that are not UTF-8', async () => {
    const account = await accountOf(acme, 'ACME-2-');
    // A header travels as bytes: the client sends the address's UTF-8 bytes, one per header character.
    const asBytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
    const changed = await put(acme, account.id, { rowVersion: account.rowVersion, notes: 'by jürgen' }, { ...acme.adminHeaders, useremail: asBytes('jürgen@exämple.com') });
    expect(changed.status).toBe(200);
    const [entry] = await app.orm.em.fork().execute<{ actor: string }[]>(
      `select actor from audit_entries where entity_type = 'MerchantAccount' and entity_id = ? order by id desc limit 1`,
      [String(account.id)],
    );
    expect(entry!.actor).toBe('jürgen@exämple.com');
    const audits = await auditCount(account.id);
    const notUtf8 = await put(acme, account.id, { rowVersion: account.rowVersion + 1, notes: 'by nobody' }, { ...acme.adminHeaders, useremail: 'j\xfcrgen@example.com' });
    expect(notUtf8).toEqual({ status: 400, body: { success: false, message: 'UserEmail must be UTF-8 text' } });
    expect(await auditCount(account.id)).toBe(audits);
  });

  it.each(['<script>alert(1)</script>@x.co', 'a@x.co>', 'a"b@x.co', 'a..b@x.co', 'a@-x.co', 'a@b.c'])(
    'refuses UserEmail %s, which is no address a payment would take (the audit shows it to admin UIs), changing nothing',
    async (userEmail) => {
      const account = await accountOf(acme, 'ACME-2-');
      const audits = await auditCount(account.id);
      const refused = await put(acme, account.id, { rowVersion: account.rowVersion, notes: 'by a script' }, { ...acme.adminHeaders, useremail: userEmail });
      expect(refused).toEqual({ status: 400, body: { success: false, message: 'UserEmail must be an e-mail address' } });
      expect(await auditCount(account.id)).toBe(audits);
      expect(await accountOf(acme, 'ACME-2-')).toEqual(account);
    },
  );

  it('refuses query parameters it does not take, changing nothing: a rowVersion belongs in the body', async () => {
    const account = await accountOf(acme, 'ACME-2-');
    const row = await storedRow(account.id);
    const answer = await call('PUT', `/api/admin/merchantaccounts/${account.id}?rowVersion=${account.rowVersion}`, acme.adminHeaders, { rowVersion: account.rowVersion, notes: 'queried' });
    expect(answer).toEqual({ status: 400, body: { success: false, message: 'rowVersion is not a known field' } });
    expect(await storedRow(account.id)).toEqual(row);
  });

  it('answers a stale rowVersion with 409 and changes nothing', async () => {
    const account = await accountOf(acme, 'ACME-2-');
    const row = await storedRow(account.id);
    const audits = await auditCount(account.id);
    const { status, body } = await put(acme, account.id, { rowVersion: account.rowVersion - 1, title: 'Lost update' });
    expect(status).toBe(409);
    expect(body.success).toBe(false);
    expect(body.message).toMatch(/rowVersion/);
    expect(await storedRow(account.id)).toEqual(row);
    expect(await auditCount(account.id)).toBe(audits);
  });

  it('lets exactly one of many concurrent updates of one version through; the others are 409', async () => {
    const account = await accountOf(acme, 'ACME-2-');
    const audits = await auditCount(account.id);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => put(acme, account.id, { rowVersion: account.rowVersion, title: `Writer ${i}` })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, ...Array(11).fill(409)]);
    const winner = answers.find((a) => a.status === 200)!;
    const now = await accountOf(acme, 'ACME-2-');
    expect(now.rowVersion).toBe(account.rowVersion + 1);
    expect(now.title).toBe(winner.body.returnVal.title);
    expect(await auditCount(account.id)).toBe(audits + 1);
  });

  it('keeps a stored secret when its mask is sent back, replaces one sent in clear, and never audits credentials', async () => {
    const account = await accountOf(acme, 'ACME-1-');
    const currencies = account.currencies.map((c: any) =>
      c.currency === 'USD' ? { currency: 'USD', gatewayCredentials: { ...c.gatewayCredentials, password: 'a-brand-new-password' } } : c,
    );
    const { status, body } = await put(acme, account.id, { ...account, currencies });
    expect(status).toBe(200);
    expect(body.returnVal.currencies).toEqual([
      { currency: 'EUR', gatewayCredentials: { apiKey: '****', username: null, password: null, emailAddress: null, processorId: null } },
      { currency: 'USD', gatewayCredentials: { apiKey: '****3210', username: '****', password: '****word', emailAddress: null, processorId: null } },
    ]);
    const rows = await app.orm.em.fork().execute<{ currency: string; credentials_ciphertext: string }[]>(
      `select currency, credentials_ciphertext from merchant_account_currencies where merchant_account_id = ? order by currency`,
      [account.id],
    );
    expect(rows.map((r) => [r.currency, JSON.parse(app.secretBox.open(r.credentials_ciphertext))])).toEqual([
      ['EUR', { apiKey: 'abc' }],
      ['USD', { apiKey: SECRET_API_KEY, username: 'acme-user', password: 'a-brand-new-password' }],
    ]);
    const [entry] = await app.orm.em.fork().execute<{ changes: Record<string, unknown> }[]>(
      `select changes from audit_entries where entity_type = 'MerchantAccount' and entity_id = ? order by id desc limit 1`,
      [String(account.id)],
    );
    expect(entry!.changes).toEqual({ gatewayCredentialsChanged: ['USD'], rowVersion: { before: account.rowVersion, after: account.rowVersion + 1 } });
    expect(JSON.stringify(entry)).not.toMatch(/a-brand-new-password|hunter2|sk_processor/);
  });

  it('answers 409 to an update read before provisioning changed the credentials, and 400 to a mask of no stored value', async () => {
    const unique = randomUUID().slice(0, 8);
    const apiKey = `sk_test_${randomUUID().replaceAll('-', '')}`;
    const clientId = `client-${unique}`;
    const mid = `ROTATE-${unique}`;
    const fixture = (processorKey: string) =>
      parseFixture({
        tenants: [
          {
            slug: `rotate-${unique}`,
            name: `Rotate ${unique}`,
            clientId,
            apiKeys: [{ name: 'default', value: apiKey }],
            merchantAccounts: [merchantAccount(mid, { currencies: [{ currency: 'USD', gatewayCredentials: { apiKey: processorKey } }] })],
          },
        ],
      });
    const provisionDeps = () => ({ em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor: 'test' });
    await provision(provisionDeps(), fixture('old-processor-key-AAAA'));
    const headers = { authorization: `Bearer ${apiKey}`, clientid: clientId, useremail: 'admin@example.com' };
    const read = (await call('GET', '/api/admin/merchantaccounts', headers)).body.returnVal[0];
    expect(read.currencies).toEqual([{ currency: 'USD', gatewayCredentials: { apiKey: '****AAAA', username: null, password: null, emailAddress: null, processorId: null } }]);
    const storedKey = async (currency: string) => {
      const [row] = await app.orm.em.fork().execute<{ credentials_ciphertext: string }[]>(
        `select credentials_ciphertext from merchant_account_currencies where merchant_account_id = ? and currency = ?`,
        [read.id, currency],
      );
      return row && (JSON.parse(app.secretBox.open(row.credentials_ciphertext)) as { apiKey?: string }).apiKey;
    };

    // The operator rotates the processor key; an admin then saves the form it read before.
    await provision(provisionDeps(), fixture('new-processor-key-BBBB'));
    const stale = await call('PUT', `/api/admin/merchantaccounts/${read.id}`, headers, { ...read, title: 'Renamed' });
    expect(stale.status).toBe(409);
    expect(await storedKey('USD')).toBe('new-processor-key-BBBB');

    // A mask of another value (the currency switched in a form that echoes what GET answered) is no secret.
    const current = (await call('GET', '/api/admin/merchantaccounts', headers)).body.returnVal[0];
    expect(current.rowVersion).toBeGreaterThan(read.rowVersion);
    const switched = await call('PUT', `/api/admin/merchantaccounts/${read.id}`, headers, {
      rowVersion: current.rowVersion,
      currencies: [{ currency: 'EUR', gatewayCredentials: current.currencies[0].gatewayCredentials }],
    });
    expect(switched.status).toBe(400);
    expect(switched.body.message).toMatch(/apiKey is a mask/);
    expect(await storedKey('EUR')).toBeUndefined();
    expect(await storedKey('USD')).toBe('new-processor-key-BBBB');
  });

  it('accepts the read-only fields unchanged and ignores resolved names; a changed brandId takes its known name', async () => {
    const account = await accountOf(acme, 'ACME-2-');
    const { status, body } = await put(acme, account.id, { ...account, brandId: 7, brand: 'ignored' });
    expect(status).toBe(200);
    expect(body.returnVal).toMatchObject({ brandId: 7, brand: 'Acme Brand', rowVersion: account.rowVersion + 1 });
  });

  it.each([
    [{ colour: 'red' }, 'colour is not a known field'],
    [{ title: 42 }, 'title must be string'],
    [{ fullyLive: 'yes' }, 'fullyLive must be boolean'],
    [{ currencies: [{ currency: 'USD', gatewayCredentials: { token: 'x' } }] }, 'currencies[0].gatewayCredentials.token is not a known field'],
    [{ currencies: [{ currency: 'XAU' }] }, 'currencies[0].currency must be an ISO 4217 currency code a card is charged in'],
    [{ defaultCurrency: 'CLF' }, 'defaultCurrency must be an ISO 4217 currency code'],
    [{ mid: 'STOLEN-MID' }, 'mid is read-only'],
    [{ companyId: 999999 }, 'companyId is read-only'],
    [{ fullyLive: null }, 'fullyLive'],
    [{ maxPrice: 1.234 }, 'maxPrice must be an amount from 0 to 999999999999.99 with at most 2 decimals'],
    // A decimal string is taken ("99.99"): one with three decimals is told so, not "must be number".
    [{ maxPrice: '12.345' }, 'maxPrice must be an amount from 0 to 999999999999.99 with at most 2 decimals'],
    [{ chargebackFee: '1e3' }, 'chargebackFee must be an amount from 0 to 999999999999.99 with at most 2 decimals'],
    [{ maxPrice: -1 }, 'maxPrice must be >= 0'],
    [{ reservePercentage: 10 }, 'reservePercentage'],
    [{ title: 'x'.repeat(201) }, 'title'],
    [{ title: '' }, 'title'],
    [{ title: '   ' }, 'title'],
    [{ acquirerBINNetworkA: 'ééééééééééé' }, 'acquirerBINNetworkA'],
    [{ acquirerBINNetworkB: '4111' }, 'acquirerBINNetworkB'],
    [{ monthlyCap: 10_000_000_000 }, 'monthlyCap must be <= 2147483647'],
    [{ brandId: -3_000_000_000 }, 'brandId'],
    // Instants ajv's date-time format passes but neither JavaScript nor PostgreSQL can hold.
    [{ capLimited: '2016-12-31T23:59:60Z' }, 'capLimited must be a date-time'],
    [{ capLimited: '0000-01-01T00:00:00Z' }, 'capLimited must be a date-time'],
    [{ capLimited: '9999-12-31T23:00:00-05:00' }, 'capLimited must be a date-time'],
    // A reference id no account carries a name for would leave its name silently null.
    [{ brandId: 424242 }, 'brandId 424242 is not known'],
    [{ verticalId: 424242 }, 'verticalId 424242 is not known'],
    [{ chargebackMitigationProviderId: 424242 }, 'chargebackMitigationProviderId 424242 is not known'],
    [{ processorPortalAccessId: 424242 }, 'processorPortalAccessId 424242 is not known'],
    [{ gatewayId: 2 }, 'gatewayId is read-only'],
  ])('refuses %j with 400 naming the field, changing nothing', async (change, message) => {
    const account = await accountOf(acme, 'ACME-2-');
    const row = await storedRow(account.id);
    const { status, body } = await put(acme, account.id, { rowVersion: account.rowVersion, ...change });
    expect(status).toBe(400);
    expect(body.success).toBe(false);
    expect(body.message).toContain(message);
    expect(await storedRow(account.id)).toEqual(row);
  });

  it('audits bank account and routing numbers masked to their last 4 characters, like credentials', async () => {
    const account = await accountOf(acme, 'ACME-2-');
    const first = await put(acme, account.id, { rowVersion: account.rowVersion, accountNumber: 'DE89370400440532013000', routingNumber: '021000021' });
    expect(first.status).toBe(200);
    expect(first.body.returnVal).toMatchObject({ accountNumber: 'DE89370400440532013000', routingNumber: '021000021' });
    const second = await put(acme, account.id, { rowVersion: account.rowVersion + 1, accountNumber: 'GB29NWBK60161331926819' });
    expect(second.status).toBe(200);
    const entries = await app.orm.em.fork().execute<{ changes: Record<string, unknown> }[]>(
      `select changes from audit_entries where entity_type = 'MerchantAccount' and entity_id = ? order by id desc limit 2`,
      [String(account.id)],
    );
    expect(entries[1]!.changes).toMatchObject({ accountNumber: { before: null, after: '****3000' }, routingNumber: { before: null, after: '****0021' } });
    expect(entries[0]!.changes).toMatchObject({ accountNumber: { before: '****3000', after: '****6819' } });
    expect(JSON.stringify(entries)).not.toMatch(/DE8937|GB29NW|021000021/);
  });

  it('audits the bank numbers a provisioning fixture sets masked too', async () => {
    const mid = `BANK-${midSuffix}`;
    const tenant = await createTestTenant(app, { merchantAccounts: [merchantAccount(mid, { accountNumber: '000123456789', routingNumber: '021000021' })] });
    const [entry] = await app.orm.em.fork().execute<{ action: string; changes: Record<string, unknown> }[]>(
      `select a.action, a.changes from audit_entries a join merchant_accounts m on a.entity_type = 'MerchantAccount' and a.entity_id = m.id::text where m.mid = ? and m.tenant_id = ?`,
      [mid, tenant.id],
    );
    expect(entry).toMatchObject({ action: 'merchant_account.created', changes: { accountNumber: '****6789', routingNumber: '****0021' } });
    expect(JSON.stringify(entry)).not.toMatch(/000123456789|021000021/);
  });

  it('requires rowVersion, refuses NUL bytes and non-JSON bodies', async () => {
    const account = await accountOf(acme, 'ACME-2-');
    expect((await put(acme, account.id, { title: 'x' })).body.message).toBe('rowVersion is required');
    expect((await put(acme, account.id, { rowVersion: account.rowVersion, title: 'bad\u0000title' })).status).toBe(400);
    expect((await put(acme, account.id, '{"rowVersion": 1,')).body.message).toBe('Invalid JSON body');
  });

  it("answers 404 for another tenant's account and lets a parent update its child's", async () => {
    const foreign = (await list(other)).body.returnVal[0];
    const row = await storedRow(foreign.id);
    const { status } = await put(acme, foreign.id, { rowVersion: foreign.rowVersion, title: 'Hijacked' });
    expect(status).toBe(404);
    expect(await storedRow(foreign.id)).toEqual(row);
    expect((await put(acme, 2_000_000_000, { rowVersion: 1 })).status).toBe(404);

    const childAccount = await accountOf(acme, 'CHILD-1-');
    const updated = await put(acme, childAccount.id, { rowVersion: childAccount.rowVersion, notes: 'Managed by parent' });
    expect(updated.status).toBe(200);
    expect((await list(child)).body.returnVal[0].notes).toBe('Managed by parent');
  });

  it("scopes the versioned update statement itself to the tenant's companies, not only the read before it", async () => {
    // The service reads the account within the tenant first, so a foreign id never reaches the update today; the update
    // must still refuse it on its own, or a future caller that skips the read could change another company's account.
    const foreign = (await list(other)).body.returnVal[0];
    const row = await storedRow(foreign.id);
    const notes = new Map([['notes', 'Hijacked by statement']] as const);
    const em = app.orm.em.fork();
    expect(await updateMerchantAccountAtVersion(em, { tenantId: acme.id, id: foreign.id, rowVersion: foreign.rowVersion }, notes)).toBe(false);
    expect(await storedRow(foreign.id)).toEqual(row);

    // A child company may not reach its parent's account through the statement either; the parent reaches its child's.
    const parentAccount = await accountOf(acme, 'ACME-2-');
    expect(await updateMerchantAccountAtVersion(em, { tenantId: child.id, id: parentAccount.id, rowVersion: parentAccount.rowVersion }, notes)).toBe(false);
    const childAccount = await accountOf(acme, 'CHILD-1-');
    expect(await updateMerchantAccountAtVersion(em, { tenantId: acme.id, id: childAccount.id, rowVersion: childAccount.rowVersion }, new Map([['notes', 'Parent via statement']] as const))).toBe(true);
    expect((await list(child)).body.returnVal[0].notes).toBe('Parent via statement');
  });
});

describe('PUT /api/admin/merchantaccounts/{id}: the audit entry commits with the change', () => {
  const MUTATION = `mutation($id: Int!, $input: JSONObject!) { updateMerchantAccount(id: $id, input: $input, userEmail: "gql.admin@example.com") { title rowVersion } }`;

  it('refuses an update whose audit entry cannot be written (500, documented), changing nothing; the version read still applies', async () => {
    const tenant = await createTestTenant(app, {
      merchantAccounts: [merchantAccount(`AUDITED-${midSuffix}`, { currencies: [{ currency: 'USD', gatewayCredentials: { apiKey: 'audited-key-1111' } }] })],
    });
    const before = (await list(tenant)).body.returnVal[0];
    const row = await storedRow(before.id);
    const currencies = await storedCurrencies(before.id);
    const audits = await auditCount(before.id);
    const change = { rowVersion: before.rowVersion, title: 'Unaudited', notes: 'never kept', currencies: [{ currency: 'EUR', gatewayCredentials: { apiKey: 'unaudited-key-2222' } }] };

    // PostgreSQL refuses every update entry of this tenant's accounts: the audit trail is out of order.
    const allow = await refuse('audit_entries', 'insert', `new.tenant_id = ${tenant.id} and new.action = 'merchant_account.updated'`);
    try {
      const answer = await put(tenant, before.id, change);
      expect(answer).toEqual({ status: 500, body: { success: false, message: 'Internal server error' } });
      expect(await undocumentedParts(app.baseUrl, '/api/admin/merchantaccounts/{id}', 'put', 500, answer.body)).toEqual([]);
      const viaGraphql = await graphql(tenant, MUTATION, { id: before.id, input: change });
      expect(viaGraphql.data).toBeNull();
      expect(viaGraphql.errors).toEqual([expect.objectContaining({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } })]);

      expect((await list(tenant)).body.returnVal).toEqual([before]);
      expect(await storedRow(before.id)).toEqual(row);
      expect(await storedCurrencies(before.id)).toEqual(currencies);
      expect(await auditCount(before.id)).toBe(audits);
    } finally {
      await allow();
    }

    // Nothing moved the version: the same update, once its entry can be written, applies and is audited once.
    const applied = await put(tenant, before.id, change);
    expect(applied.status).toBe(200);
    expect(applied.body.returnVal).toMatchObject({ title: 'Unaudited', notes: 'never kept', rowVersion: before.rowVersion + 1, currencies: [{ currency: 'EUR', gatewayCredentials: expect.objectContaining({ apiKey: '****2222' }) }] });
    expect(await auditCount(before.id)).toBe(audits + 1);
  });

  it('keeps no audit entry of an update whose transaction fails to commit', async () => {
    const tenant = await createTestTenant(app, { merchantAccounts: [merchantAccount(`UNCOMMITTED-${midSuffix}`)] });
    const before = (await list(tenant)).body.returnVal[0];
    const row = await storedRow(before.id);
    const audits = await auditCount(before.id);

    // The update's statements all pass; PostgreSQL refuses its transaction at the commit, after the entry was written.
    const allow = await refuse('merchant_accounts', 'update at commit', `new.tenant_id = ${tenant.id}`);
    try {
      const answer = await put(tenant, before.id, { rowVersion: before.rowVersion, title: 'Never committed' });
      expect(answer).toEqual({ status: 500, body: { success: false, message: 'Internal server error' } });
      const viaGraphql = await graphql(tenant, MUTATION, { id: before.id, input: { rowVersion: before.rowVersion, title: 'Never committed' } });
      expect(viaGraphql.errors).toEqual([expect.objectContaining({ extensions: { code: 'INTERNAL_SERVER_ERROR' } })]);

      expect((await list(tenant)).body.returnVal).toEqual([before]);
      expect(await storedRow(before.id)).toEqual(row);
      // The audit tells of no change the account never went through.
      expect(await auditCount(before.id)).toBe(audits);
    } finally {
      await allow();
    }
  });
});

describe('OpenAPI', () => {
  it('documents the real answers: list, update, 400, 404 and 409', async () => {
    const listed = await list(acme);
    expect(await undocumentedParts(app.baseUrl, '/api/admin/merchantaccounts', 'get', 200, listed.body)).toEqual([]);
    const account = listed.body.returnVal.find((a: any) => a.mid.startsWith('CHILD-1-'));
    const updated = await put(acme, account.id, { rowVersion: account.rowVersion, psp: 'Documented PSP' });
    expect(await undocumentedParts(app.baseUrl, '/api/admin/merchantaccounts/{id}', 'put', 200, updated.body)).toEqual([]);
    for (const [status, body] of [[409, { rowVersion: account.rowVersion }], [400, { rowVersion: 1, colour: 'red' }]] as const) {
      const answer = await put(acme, account.id, body);
      expect(answer.status).toBe(status);
      expect(await undocumentedParts(app.baseUrl, '/api/admin/merchantaccounts/{id}', 'put', status, answer.body)).toEqual([]);
    }
    const missing = await put(acme, 2_000_000_000, { rowVersion: 1 });
    expect(await undocumentedParts(app.baseUrl, '/api/admin/merchantaccounts/{id}', 'put', 404, missing.body)).toEqual([]);
  });
});

describe('GraphQL merchant accounts', () => {
  const FIELDS = 'id mid title fullyLive brandId brand gateway rowVersion reservePercentage currencies { currency gatewayCredentials { apiKey password } }';

  it('filters by live, brand, gateway and currency, with the REST records', async () => {
    const all = await graphql(acme, `{ merchantAccounts { ${FIELDS} } }`);
    expect(all.data.merchantAccounts.map((a: any) => a.mid).sort()).toEqual([`ACME-1-${midSuffix}`, `ACME-2-${midSuffix}`, `CHILD-1-${midSuffix}`].sort());
    const live = await graphql(acme, `{ merchantAccounts(live: false) { mid } }`);
    expect(live.data.merchantAccounts.map((a: any) => a.mid)).toEqual([`ACME-2-${midSuffix}`]);
    const eur = await graphql(acme, `{ merchantAccounts(currency: "EUR") { mid currencies { gatewayCredentials { apiKey } } } }`);
    expect(eur.data.merchantAccounts).toEqual([{ mid: `ACME-1-${midSuffix}`, currencies: [{ gatewayCredentials: { apiKey: '****' } }, { gatewayCredentials: { apiKey: '****3210' } }] }]);
    // Any case, as the mitigation search's currency.
    expect((await graphql(acme, `{ merchantAccounts(currency: "eur") { mid currencies { gatewayCredentials { apiKey } } } }`)).data).toEqual(eur.data);
    const brand = await graphql(acme, `{ merchantAccounts(brandId: 7, gateway: "sandbox") { mid } }`);
    expect(brand.data.merchantAccounts.map((a: any) => a.mid).sort()).toEqual([`ACME-1-${midSuffix}`, `ACME-2-${midSuffix}`].sort());
    expect((await graphql(acme, `{ merchantAccounts(gateway: "elsewhere") { mid } }`)).data.merchantAccounts).toEqual([]);
    // A filter no account could ever match is a mistake said, not an empty list.
    expect((await graphql(acme, `{ merchantAccounts(currency: "xyz") { mid } }`)).errors[0]).toMatchObject({ message: expect.stringContaining('currency must be an ISO 4217 currency code a card is charged in'), extensions: { code: 'BAD_USER_INPUT' } });
    expect((await graphql(acme, `{ merchantAccounts(brandId: -1) { mid } }`)).errors[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    const rest = await accountOf(acme, 'ACME-1-');
    const gql = all.data.merchantAccounts.find((a: any) => a.id === rest.id);
    expect(gql).toMatchObject({ title: rest.title, rowVersion: rest.rowVersion, reservePercentage: rest.reservePercentage });
  });

  it('updates with the REST rules: stale version CONFLICT, unknown field BAD_USER_INPUT naming it, audit readable', async () => {
    const account = await accountOf(acme, 'ACME-1-');
    const mutation = `mutation($id: Int!, $input: JSONObject!) { updateMerchantAccount(id: $id, input: $input, userEmail: "gql.admin@example.com") { title rowVersion } }`;
    const ok = await graphql(acme, mutation, { id: account.id, input: { rowVersion: account.rowVersion, title: 'Via GraphQL' } });
    expect(ok.data.updateMerchantAccount).toEqual({ title: 'Via GraphQL', rowVersion: account.rowVersion + 1 });

    const stale = await graphql(acme, mutation, { id: account.id, input: { rowVersion: account.rowVersion, title: 'Stale' } });
    expect(stale.errors[0].extensions.code).toBe('CONFLICT');
    const unknown = await graphql(acme, mutation, { id: account.id, input: { rowVersion: account.rowVersion + 1, colour: 'red' } });
    expect(unknown.errors[0]).toMatchObject({ message: 'colour is not a known field', extensions: { code: 'BAD_USER_INPUT' } });
    const foreign = (await list(other)).body.returnVal[0];
    expect((await graphql(acme, mutation, { id: foreign.id, input: { rowVersion: foreign.rowVersion, title: 'x' } })).errors[0].extensions.code).toBe('NOT_FOUND');

    const audit = await graphql(acme, `query($id: Int) { merchantAccountAudit(merchantAccountId: $id, first: 1) { merchantAccountId actor action changes createdAt } }`, { id: account.id });
    expect(audit.data.merchantAccountAudit).toEqual([
      {
        merchantAccountId: account.id,
        actor: 'gql.admin@example.com',
        action: 'merchant_account.updated',
        changes: { title: { before: account.title, after: 'Via GraphQL' }, rowVersion: { before: account.rowVersion, after: account.rowVersion + 1 } },
        createdAt: expect.any(String),
      },
    ]);
    const foreignAudit = await graphql(other, `query($id: Int) { merchantAccountAudit(merchantAccountId: $id) { id } }`, { id: account.id });
    expect(foreignAudit.data.merchantAccountAudit).toEqual([]);

    // The actor the REST header takes is taken here too; one it refuses is refused here too.
    const withActor = (userEmail: string, rowVersion: number) =>
      graphql(acme, `mutation($id: Int!, $input: JSONObject!, $who: String!) { updateMerchantAccount(id: $id, input: $input, userEmail: $who) { rowVersion } }`, { id: account.id, input: { rowVersion }, who: userEmail });
    expect((await withActor('A@B.co', account.rowVersion + 1)).data.updateMerchantAccount).toEqual({ rowVersion: account.rowVersion + 2 });
    // Kept as sent, so taken only as kept: no line breaks around it, nothing IDNA would drop from its domain.
    for (const refused of ['not an address', '<img/src/onerror=alert(1)>@x.co', 'a..b@x.co', '\na@x.co\n', 'a@x\u200b.co', `${'a'.repeat(65)}@x.co`]) {
      expect((await withActor(refused, account.rowVersion + 2)).errors[0]).toMatchObject({ message: expect.stringContaining('userEmail must be an e-mail address'), extensions: { code: 'BAD_USER_INPUT' } });
    }
  });

  it('refuses hostile values as BAD_USER_INPUT naming the field, never an internal error, changing nothing', async () => {
    const account = await accountOf(acme, 'ACME-1-');
    const row = await storedRow(account.id);
    const mutation = `mutation($id: Int!, $input: JSONObject!) { updateMerchantAccount(id: $id, input: $input, userEmail: "gql.admin@example.com") { rowVersion } }`;
    for (const [input, message] of [
      [{ capLimited: '2016-12-31T23:59:60Z' }, /^capLimited must be a date-time/],
      [{ capLimited: '9999-12-31T23:00:00-05:00' }, /^capLimited must be a date-time/],
      [{ brandId: 424242 }, /^brandId 424242 is not known/],
    ] as const) {
      const answer = await graphql(acme, mutation, { id: account.id, input: { rowVersion: account.rowVersion, ...input } });
      expect(answer.errors[0].extensions.code).toBe('BAD_USER_INPUT');
      expect(answer.errors[0].message).toMatch(message);
    }
    expect(await storedRow(account.id)).toEqual(row);
    // An audit cursor past the bigint range is refused by its pattern, not by a failed cast.
    const audit = await graphql(acme, `{ merchantAccountAudit(before: "9999999999999999999") { id } }`);
    expect(audit.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});
