import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../domain/crypto/secret-box.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { waitForLockWaiters } from './support/lock-waiters.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

function fixture(unique = randomUUID().slice(0, 8)) {
  return {
    tenants: [
      {
        slug: `acme-${unique}`,
        name: 'Acme',
        clientId: `acme-${unique}`,
        parentCompany: 'Acme Holdings',
        apiKeys: [{ name: 'checkout' }],
        products: [
          {
            slug: 'monthly',
            name: 'Monthly',
            price: 19.9,
            currency: 'USD',
            acceptedNetworks: ['NetworkA'],
            subscriptionPlan: { recurringAmount: '19.90', intervalDays: 30, gracePeriodDays: 3 },
            velocity: { cardSubmitLimit: 2 },
          },
        ],
        merchantAccounts: [
          {
            mid: `MID-${unique}`,
            title: 'Primary',
            gateway: 'sandbox',
            maxPrice: '250.00',
            reservePercentage: 0.1,
            monthlyCap: 10000,
            dynamicDescriptorPrefix_NetworkB: 'ACME*',
            capLimited: '2026-01-01T00:00:00.000Z',
            currencies: [{ currency: 'USD', gatewayCredentials: { apiKey: 'processor-secret-key', password: 'processor-password' } }],
          },
        ],
        leads: { allowedOrigins: ['https://shop.acme.example'] },
        email: { senderDomains: ['acme.example'] },
        webhookEndpoints: [{ slug: 'main', url: 'https://hooks.acme.example/in' }],
      },
    ],
  };
}

const run = (input: unknown, actor = 'test') => provision({ em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor }, parseFixture(input));

/** Every table as JSON: secrets must not appear anywhere in it. */
async function dumpTables(): Promise<string> {
  const em = app.orm.em.fork();
  const tables = await em.execute<{ tablename: string }[]>(`select tablename from pg_tables where schemaname = 'public'`);
  const dumps = await Promise.all(tables.map(({ tablename }) => em.execute(`select * from "${tablename}"`)));
  return JSON.stringify(dumps);
}

/** One tenant's rows (suites run in parallel, so whole-table dumps are not stable). */
async function dumpTenant(slug: string): Promise<string> {
  const connection = app.orm.em.fork().getConnection();
  const [tenant] = await connection.execute<{ id: number }[]>(`select * from tenants where slug = ?`, [slug]);
  if (!tenant) return 'absent';
  const scoped = ['api_keys', 'products', 'merchant_accounts', 'lead_key_sets', 'sender_domains', 'webhook_endpoints', 'audit_entries'];
  const rows = await Promise.all(scoped.map((table) => connection.execute(`select * from "${table}" where tenant_id = ? order by 1`, [tenant.id])));
  const currencies = await connection.execute(
    `select c.* from merchant_account_currencies c join merchant_accounts m on m.id = c.merchant_account_id where m.tenant_id = ? order by c.id`,
    [tenant.id],
  );
  return JSON.stringify([tenant, rows, currencies]);
}

describe('provisioning', () => {
  it('creates every record, returns ids and one-time secrets, and stores secrets only hashed or encrypted', async () => {
    const [result] = await run(fixture());
    expect(result).toMatchObject({ change: 'created', apiKeys: [{ name: 'checkout', change: 'created', key: expect.stringMatching(/^sk_api_/) }] });
    expect(result!.products).toEqual([{ slug: 'monthly', id: expect.any(Number), change: 'created' }]);
    expect(result!.leadKeys).toMatchObject({ change: 'created', publishableKey: expect.stringMatching(/^pk_live_/), secretKey: expect.stringMatching(/^sk_live_/) });
    expect(result!.webhookEndpoints[0]).toMatchObject({ change: 'created', secret: expect.stringMatching(/^whsec_/) });

    const dump = await dumpTables();
    for (const secret of [result!.apiKeys[0]!.key!, result!.leadKeys!.publishableKey!, result!.leadKeys!.secretKey!, result!.webhookEndpoints[0]!.secret!, 'processor-secret-key', 'processor-password']) {
      expect(dump).not.toContain(secret);
    }
    expect(dump).toContain(hashSecret(result!.apiKeys[0]!.key!));

    const [product] = await app.orm.em.fork().execute(`select price, subscription_plan from products where id = ?`, [result!.products[0]!.id]);
    expect(product).toMatchObject({ price: '19.90', subscription_plan: { recurringAmount: '19.90', intervalDays: 30, trialDays: 0, gracePeriodDays: 3 } });
    const [account] = await app.orm.em.fork().execute(`select max_price, reserve_percentage, dynamic_descriptor_prefix_network_b from merchant_accounts where id = ?`, [
      result!.merchantAccounts[0]!.id,
    ]);
    expect(account).toEqual({ max_price: '250.00', reserve_percentage: '0.1000', dynamic_descriptor_prefix_network_b: 'ACME*' });
  });

  it("puts a product and a lead key pair naming no application in the fixture's first application, as the fixture reads", async () => {
    const unique = randomUUID().slice(0, 8);
    const tenant = { slug: `apps-${unique}`, name: 'Apps', clientId: `apps-${unique}` };
    // First provisioned without applications: the tenant gets `default`, its oldest.
    await run({ tenants: [{ ...tenant, apiKeys: [{ name: 'default' }] }] });
    const [again] = await run({
      tenants: [
        {
          ...tenant,
          applications: [{ slug: 'shop', name: 'Shop' }],
          products: [{ slug: 'p', name: 'P', price: '5.00', currency: 'USD' }],
          leads: { environment: 'test' },
        },
      ],
    });
    const applicationsOf = (table: 'products' | 'lead_key_sets') =>
      app.orm.em.fork().execute<{ slug: string }[]>(`select a.slug from ${table} t join applications a on a.id = t.application_id where t.tenant_id = ?`, [again!.id]);
    // A payment of the product marks leads written with this pair paid only when both are in the same application.
    expect(await applicationsOf('products')).toEqual([{ slug: 'shop' }]);
    expect(await applicationsOf('lead_key_sets')).toEqual([{ slug: 'shop' }]);
    // A fixture declaring no applications keeps naming the tenant's oldest for a new product.
    const [third] = await run({ tenants: [{ ...tenant, products: [{ slug: 'q', name: 'Q', price: '5.00', currency: 'USD' }] }] });
    const [q] = await app.orm.em.fork().execute<{ slug: string }[]>(`select a.slug from products p join applications a on a.id = p.application_id where p.id = ?`, [
      third!.products.find((product) => product.slug === 'q')!.id,
    ]);
    expect(q).toEqual({ slug: 'default' });
  });

  it('never moves an existing product or lead key pair naming no application to another one', async () => {
    const unique = randomUUID().slice(0, 8);
    const tenant = { slug: `keep-${unique}`, name: 'Keep', clientId: `keep-${unique}` };
    const product = { slug: 'p', name: 'P', price: '5.00', currency: 'USD' };
    const keys = { publishableKey: `pk_test_${randomBytes(24).toString('base64url')}`, secretKey: `sk_test_${randomBytes(32).toString('base64url')}` };
    // A live storefront: its product and the keys it writes leads with, in `default`.
    const [first] = await run({ tenants: [{ ...tenant, products: [product], leads: keys }] });
    // The same fixture with an application added: nothing moves, the given keys are the stored ones.
    const [again] = await run({ tenants: [{ ...tenant, applications: [{ slug: 'shop', name: 'Shop' }], products: [product], leads: keys }] });
    expect(again!.leadKeys).toMatchObject({ change: 'unchanged', application: 'default' });
    expect(again!.products).toEqual([{ slug: 'p', id: first!.products[0]!.id, change: 'unchanged' }]);
    const [row] = await app.orm.em.fork().execute<{ slug: string }[]>(`select a.slug from products p join applications a on a.id = p.application_id where p.id = ?`, [first!.products[0]!.id]);
    expect(row).toEqual({ slug: 'default' });
    // Generated keys stay too: no second pair is made for `shop`.
    const [generated] = await run({ tenants: [{ ...tenant, slug: `${tenant.slug}-g`, clientId: `${tenant.clientId}-g`, leads: { environment: 'test' } }] });
    const [rerun] = await run({ tenants: [{ ...tenant, slug: `${tenant.slug}-g`, clientId: `${tenant.clientId}-g`, applications: [{ slug: 'shop', name: 'Shop' }], leads: { environment: 'test' } }] });
    expect(rerun!.leadKeys).toEqual({ change: 'unchanged', application: 'default', environment: 'test' });
    expect(generated!.leadKeys!.application).toBe('default');
  });

  it('is idempotent: a second run changes nothing and writes no audit entry', async () => {
    const input = fixture();
    await run(input);
    const before = await dumpTenant(input.tenants[0]!.slug);
    const [second] = await run(input);
    expect(second!.change).toBe('unchanged');
    expect([...second!.apiKeys, ...second!.products, ...second!.merchantAccounts, ...second!.webhookEndpoints].every((r) => r.change === 'unchanged')).toBe(true);
    expect(second!.apiKeys[0]!.key).toBeUndefined();
    expect(await dumpTenant(input.tenants[0]!.slug)).toBe(before);
  });

  it('applies a changed value as an update with an audit entry', async () => {
    const input = fixture();
    const [first] = await run(input);
    input.tenants[0]!.products[0]!.price = 24.5;
    const [second] = await run(input, 'operator:someone');
    expect(second!.products[0]).toMatchObject({ change: 'updated', id: first!.products[0]!.id });
    const audit = await app.orm.em.fork().execute(`select actor, action from audit_entries where entity_type = 'Product' and entity_id = ? order by id`, [
      String(first!.products[0]!.id),
    ]);
    expect(audit).toEqual([
      { actor: 'test', action: 'product.created' },
      { actor: 'operator:someone', action: 'product.updated' },
    ]);
  });

  it("keeps a tenant's settings a later fixture leaves out (fixtures add and update); a null rate limit asks for the default", async () => {
    const input = fixture();
    const tenant = { ...input.tenants[0]!, rateLimitPerMinute: 100_000 };
    await run({ tenants: [tenant] });
    const settings = () =>
      app.orm.em.fork().execute(`select rate_limit_per_minute, parent_company_name from tenants where slug = ?`, [tenant.slug]).then((rows) => rows[0]);
    // A fixture that only names the tenant (to add an endpoint, say) changes none of them.
    const [again] = await run({ tenants: [{ slug: tenant.slug, name: tenant.name, clientId: tenant.clientId }] });
    expect(again!.change).toBe('unchanged');
    expect(await settings()).toEqual({ rate_limit_per_minute: 100_000, parent_company_name: 'Acme Holdings' });
    await run({ tenants: [{ slug: tenant.slug, name: tenant.name, clientId: tenant.clientId, rateLimitPerMinute: null }] });
    expect(await settings()).toEqual({ rate_limit_per_minute: null, parent_company_name: 'Acme Holdings' });
    await run({ tenants: [{ slug: tenant.slug, name: tenant.name, clientId: tenant.clientId, parentCompany: null }] });
    expect(await settings()).toEqual({ rate_limit_per_minute: null, parent_company_name: null });
  });

  it('applies one fixture sent four times at once as one run would: one tenant and each record once, every run answered', async () => {
    const input = fixture();
    const runs = await Promise.allSettled([0, 1, 2, 3].map(() => run(input)));
    expect(runs.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    const em = app.orm.em.fork();
    const [tenant] = await em.execute<{ id: number }[]>(`select id from tenants where slug = ?`, [input.tenants[0]!.slug]);
    const counts = await em.execute(
      `select (select count(*)::int from products where tenant_id = ?) as products, (select count(*)::int from merchant_accounts where tenant_id = ?) as accounts,
              (select count(*)::int from sender_domains where tenant_id = ?) as domains, (select count(*)::int from webhook_endpoints where tenant_id = ?) as endpoints`,
      [tenant!.id, tenant!.id, tenant!.id, tenant!.id],
    );
    expect(counts).toEqual([{ products: 1, accounts: 1, domains: 1, endpoints: 1 }]);
  });

  it('answers a conflict, changing nothing, when an admin updates a merchant account it is changing', async () => {
    const input = fixture();
    await run(input);
    const mid = input.tenants[0]!.merchantAccounts[0]!.mid;
    const changed = structuredClone(input);
    changed.tenants[0]!.merchantAccounts[0]!.title = 'Renamed by provisioning';
    const admin = app.orm.em.fork();
    await admin.begin();
    let provisioning: Promise<unknown> | undefined;
    try {
      // The admin's update holds the row (not committed yet) while provisioning reads the account and then updates it.
      await admin.execute(`update merchant_accounts set title = 'Renamed by an admin', row_version = row_version + 1 where mid = ?`, [mid]);
      provisioning = run(changed).catch((error: unknown) => error);
      await waitForLockWaiters(app.orm, 'update "merchant_accounts"%', { count: 1, timeoutMs: 10_000 });
      await admin.commit();
    } finally {
      if (admin.isInTransaction()) await admin.rollback();
    }
    const failure = await provisioning;
    expect(failure).toMatchObject({ code: 'conflict', message: expect.stringMatching(/changed while .* provision/) });
    const [account] = await app.orm.em.fork().execute<{ title: string }[]>(`select title from merchant_accounts where mid = ?`, [mid]);
    expect(account!.title).toBe('Renamed by an admin');
    // Run again, it applies.
    await run(changed);
  });

  it('refuses a MID that belongs to another tenant and leaves the database as it was', async () => {
    const first = fixture();
    await run(first);
    const before = await dumpTenant(first.tenants[0]!.slug);
    const second = fixture();
    second.tenants[0]!.merchantAccounts[0]!.mid = first.tenants[0]!.merchantAccounts[0]!.mid;
    await expect(run(second)).rejects.toThrow(/belongs to another tenant/);
    expect(await dumpTenant(first.tenants[0]!.slug)).toBe(before);
    // The half-provisioned second tenant was rolled back with the rest.
    expect(await dumpTenant(second.tenants[0]!.slug)).toBe('absent');
  });

  it.each([
    [{ tenants: [] }, /tenants/],
    [{ tenants: [{ slug: 'x', name: 'x', clientId: 'x', surprise: true }] }, /surprise is not a known field/],
    [{ tenants: [{ slug: 'x', name: 'x', clientId: 'x', products: [{ slug: 'p', name: 'p', price: '1.999', currency: 'USD' }] }] }, /price/],
    [{ tenants: [{ slug: 'x', name: 'x', clientId: 'x', merchantAccounts: [{ mid: 'M', title: 't', reservePercentage: 2 }] }] }, /reservePercentage/],
    [{ tenants: [{ slug: 'x', name: 'x', clientId: 'x', products: [{ slug: 'p', name: 'p', price: '1.99', currency: 'XTS' }] }] }, /products\[0\]\.currency must be an ISO 4217 currency code/],
    [{ tenants: [{ slug: 'x', name: 'x', clientId: 'x', blocklist: { emails: ['fine@example.com', 'bad@x.c'] } }] }, /blocklist\.emails\[1\] is not an address a checkout can give/],
    [{ tenants: [{ slug: 'x', name: 'x', clientId: 'x', blocklist: { emails: ['bad(x)@example.com'] } }] }, /blocklist\.emails\[0\]/],
    [{ tenants: [{ slug: 'x', name: 'x', clientId: 'x', merchantAccounts: [{ mid: 'M', title: 't', currencies: [{ currency: 'UYW' }] }] }] }, /currency must be an ISO 4217/],
  ])('rejects an invalid fixture with a message naming the field (%#)', (input, message) => {
    expect(() => parseFixture(input)).toThrow(message);
  });
});

describe('npm run provision', () => {
  const scratchDirs: string[] = [];
  const scratchDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'provision-'));
    scratchDirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('prints ids as JSON and is idempotent across runs', async () => {
    const dir = scratchDir();
    const file = path.join(dir, 'fixture.json');
    writeFileSync(file, JSON.stringify(fixture()));
    const env = { ...process.env, DATABASE_URL: app.config.databaseUrl!, DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'), DATA_DIR: dir };
    const exec = promisify(execFile);
    const script = path.resolve(import.meta.dirname, '../scripts/provision.ts');
    const first = JSON.parse((await exec(process.execPath, ['--import', 'tsx', script, file], { env })).stdout);
    expect(first.tenants[0]).toMatchObject({ change: 'created', apiKeys: [{ key: expect.any(String) }] });
    const second = JSON.parse((await exec(process.execPath, ['--import', 'tsx', script, file], { env })).stdout);
    expect(second.tenants[0]).toMatchObject({ id: first.tenants[0].id, change: 'unchanged' });
    expect(second.tenants[0].apiKeys[0].key).toBeUndefined();
  });

  it('exits non-zero with the reason on an invalid fixture', async () => {
    const dir = scratchDir();
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ tenants: [{ slug: 'Bad Slug' }] }));
    const exec = promisify(execFile);
    const script = path.resolve(import.meta.dirname, '../scripts/provision.ts');
    const env = { ...process.env, DATABASE_URL: app.config.databaseUrl!, DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    await expect(exec(process.execPath, ['--import', 'tsx', script, file], { env })).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('Invalid fixture') });
  });
});

describe('GraphQL operator mutations', () => {
  const mutation = `mutation($fixture: JSONObject!) { provisionTenants(fixture: $fixture) {
    slug id change apiKeys { name change key } products { key id change } webhookEndpoints { key change secret } } }`;

  async function call(authorization: string | undefined, variables: unknown, query = mutation) {
    const response = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as any;
  }

  it('provisions with the operator token, idempotently', async () => {
    const input = fixture();
    const first = await call(`Bearer ${app.config.operatorToken}`, { fixture: input });
    expect(first.errors).toBeUndefined();
    expect(first.data.provisionTenants[0]).toMatchObject({ change: 'created', apiKeys: [{ change: 'created', key: expect.stringMatching(/^sk_api_/) }] });
    const second = await call(`Bearer ${app.config.operatorToken}`, { fixture: input });
    expect(second.data.provisionTenants[0]).toMatchObject({ change: 'unchanged', apiKeys: [{ change: 'unchanged', key: null }] });
  });

  it('refuses a tenant API key and anonymous callers', async () => {
    const [tenant] = await run(fixture());
    const withKey = await call(`Bearer ${tenant!.apiKeys[0]!.key}`, { fixture: fixture() });
    expect(withKey.errors[0].extensions.code).toBe('FORBIDDEN');
    const anonymous = await call(undefined, { fixture: fixture() });
    expect(anonymous.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('takes the fixture written inline in the document as it takes it in a variable', async () => {
    const operator = `Bearer ${app.config.operatorToken}`;
    const slug = `inline-${randomUUID().slice(0, 8)}`;
    const inline = await call(operator, {}, `mutation { provisionTenants(fixture: { tenants: [{ slug: "${slug}", name: "Inline", clientId: "${slug}", products: [{ slug: "p", name: "P", price: 5, currency: "USD" }] }] }) { slug change } }`);
    expect(inline).toEqual({ data: { provisionTenants: [{ slug, change: 'created' }] } });
    const invalid = await call(operator, {}, `mutation { provisionTenants(fixture: { tenants: [{ slug: "x" }] }) { slug } }`);
    expect(invalid.errors[0]).toMatchObject({ message: expect.stringContaining('name is required'), extensions: { code: 'BAD_USER_INPUT' } });
    const anonymous = await call(undefined, {}, `mutation { provisionTenants(fixture: { tenants: [] }) { slug } }`);
    expect(anonymous.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses integers beyond the columns they are stored in with BAD_USER_INPUT naming them, writing nothing', async () => {
    const operator = `Bearer ${app.config.operatorToken}`;
    const refused: string[] = [];
    for (const [change, field] of [
      [(t: any) => (t.merchantAccounts[0].monthlyCap = 2 ** 31), 'monthlyCap'],
      [(t: any) => (t.rateLimitPerMinute = 2 ** 31), 'rateLimitPerMinute'],
      [(t: any) => (t.products[0].velocity.cardSubmitWindowSeconds = 1e15), 'cardSubmitWindowSeconds'],
    ] as const) {
      const input = fixture();
      change(input.tenants[0]);
      refused.push(input.tenants[0]!.slug);
      const result = await call(operator, { fixture: input });
      expect(result.errors[0], field).toMatchObject({ message: expect.stringContaining(field), extensions: { code: 'BAD_USER_INPUT' } });
    }
    // Other suites provision tenants meanwhile: the refused fixtures' own tenants are what must not exist.
    expect(await app.orm.em.fork().execute(`select slug from tenants where slug in (${refused.map(() => '?').join(', ')})`, refused)).toEqual([]);
  });

  it("refuses a value another record holds (another tenant's e-mail key or API key, a slug twice) with CONFLICT naming the field, never the value", async () => {
    const operator = `Bearer ${app.config.operatorToken}`;
    const owner = fixture();
    (owner.tenants[0] as any).email = { tenantKey: randomUUID(), senderDomains: [] };
    (owner.tenants[0] as any).apiKeys = [{ name: 'checkout', value: `sk_api_${randomUUID().replaceAll('-', '')}` }];
    expect((await call(operator, { fixture: owner })).errors).toBeUndefined();

    const sameEmailKey = fixture();
    (sameEmailKey.tenants[0] as any).email = { tenantKey: (owner.tenants[0] as any).email.tenantKey, senderDomains: [] };
    const sameApiKey = fixture();
    (sameApiKey.tenants[0] as any).apiKeys = (owner.tenants[0] as any).apiKeys;
    const sameSlugTwice = fixture();
    (sameSlugTwice.tenants[0] as any).applications = [{ slug: 'shop', name: 'Shop' }, { slug: 'shop', name: 'Shop again' }];
    for (const [input, field, secret] of [
      [sameEmailKey, 'email.tenantKey', (owner.tenants[0] as any).email.tenantKey],
      [sameApiKey, 'apiKeys.value', (owner.tenants[0] as any).apiKeys[0].value],
      [sameSlugTwice, 'applications.slug', undefined],
    ] as const) {
      const result = await call(operator, { fixture: input });
      expect(result.errors[0], field).toMatchObject({ extensions: { code: 'CONFLICT', field } });
      if (secret) expect(JSON.stringify(result)).not.toContain(secret);
      if (secret) expect(app.logs.text()).not.toContain(secret);
    }
    const refusedSlugs = [sameEmailKey, sameApiKey, sameSlugTwice].map((input) => input.tenants[0]!.slug);
    expect(await app.orm.em.fork().execute(`select slug from tenants where slug in (${refusedSlugs.map(() => '?').join(', ')})`, refusedSlugs)).toEqual([]);
  });

  it('rejects an invalid fixture with BAD_USER_INPUT', async () => {
    const result = await call(`Bearer ${app.config.operatorToken}`, { fixture: { tenants: [{ slug: 'x' }] } });
    expect(result.errors[0]).toMatchObject({ message: expect.stringContaining('name is required'), extensions: { code: 'BAD_USER_INPUT' } });
  });
});
