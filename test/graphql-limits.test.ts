import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { getIntrospectionQuery } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CardEncryptionKey, WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../schema/entities/index.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant, type TestTenant } from './support/tenants.ts';
import { ageCardKeys } from './support/payments.ts';
import { bearer, createLeadTenant, newSessionId, postLead } from './support/leads.ts';

let app: TestApp;
let tenant: TestTenant;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTestTenant(app);
});
afterAll(() => app?.close());
afterEach(() => vi.restoreAllMocks());

type Caller = 'anonymous' | 'operator' | 'tenant';

async function ask(query: string, options: { variables?: Record<string, unknown>; as?: Caller } = {}) {
  const as = options.as ?? 'operator';
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (as !== 'anonymous') headers.authorization = `Bearer ${as === 'operator' ? app.config.operatorToken : tenant.apiKey}`;
  const response = await fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables: options.variables }) });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? (JSON.parse(text) as any) : text };
}

/**
 * Counts the SQL statements the gateway sends from now on. The operator token is checked without the database, so a
 * request made with it that is refused before execution sends none.
 */
function countStatements(): () => number {
  const connection = app.orm.em.getConnection();
  const spy = vi.spyOn(connection, 'execute');
  return () => spy.mock.calls.length;
}

const cardKeyCount = () => app.orm.em.fork().count(CardEncryptionKey, { tenant: tenant.id });
const STATUS_FIELDS = 'count totalCount pageNumber pageSize totalPages moreResults data { id status successful isGatewayLevelStatus isIssuerDecline isInsufficientFunds isInvalidCardDetails isOther }';

describe('operation limits: refused before anything runs', () => {
  it('refuses 939 aliased statuses reads with TOO_MANY_ALIASES and sends no SQL', async () => {
    const statements = countStatements();
    const query = `{ ${Array.from({ length: 939 }, (_, i) => `s${i}: statuses { count }`).join(' ')} }`;
    const { status, body } = await ask(query);
    expect(status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors).toEqual([expect.objectContaining({ message: 'An operation may use at most 20 aliases; this one has 939', extensions: { code: 'TOO_MANY_ALIASES' } })]);
    expect(statements()).toBe(0);

    // The same count sees a read that does run.
    expect((await ask('{ statuses(pageSize: 1) { count } }')).body.data.statuses.count).toBe(1);
    expect(statements()).toBeGreaterThan(0);
  });

  it('refuses a literal nested thousands deep within the token limit with QUERY_TOO_LARGE, not the parser running out of stack', async () => {
    for (const [open, close] of [['[', ']'], ['{a: ', '}']]) {
      const literal = `${open!.repeat(2_000)}1${close!.repeat(2_000)}`;
      const { status, body } = await ask(`{ statuses(search: ${literal}) { count } }`, { as: 'anonymous' });
      expect(status).toBe(400);
      expect(body.errors).toEqual([{ message: 'The document nests lists or objects too deeply; send a flatter query', extensions: { code: 'QUERY_TOO_LARGE' } }]);
    }
  });

  it('refuses a document over 10,000 tokens with QUERY_TOO_LARGE before parsing it all', async () => {
    const statements = countStatements();
    const { status, body } = await ask(`{ ${Array.from({ length: 939 }, (_, i) => `s${i}: statuses(pageSize: 1, search: "x") { count }`).join(' ')} }`);
    expect(status).toBe(400);
    expect(body.errors).toEqual([{ message: 'The document has more than 10000 tokens; send a smaller query', extensions: { code: 'QUERY_TOO_LARGE' } }]);
    expect(statements()).toBe(0);
  });

  it('counts aliases spread through fragments', async () => {
    const aliases = Array.from({ length: 7 }, (_, i) => `c${i}: count`).join(' ');
    const { status, body } = await ask(`{ a: statuses { ...P } b: statuses { ...P } c: statuses { ...P } } fragment P on StatusPage { ${aliases} }`);
    expect(status).toBe(400);
    expect(body.errors[0]).toMatchObject({ message: 'An operation may use at most 20 aliases; this one has 24', extensions: { code: 'TOO_MANY_ALIASES' } });
  });

  it('refuses more than 10 root fields with TOO_MANY_ROOT_FIELDS', async () => {
    const statements = countStatements();
    const { status, body } = await ask(`{ ${Array.from({ length: 11 }, (_, i) => `s${i}: statuses(pageNumber: ${i + 1}) { count }`).join(' ')} }`);
    expect(status).toBe(400);
    expect(body.errors[0]).toMatchObject({ message: 'An operation may select at most 10 root fields; this one has 11', extensions: { code: 'TOO_MANY_ROOT_FIELDS' } });
    expect(statements()).toBe(0);
  });

  it('counts root fields GraphQL merges once: colocated fragments asking for the same fields are answered', async () => {
    // Eleven root selections through two fragments and an inline fragment, six distinct root fields.
    const composed = `query Dashboard { ...Accounts ...Health ... on Query { statuses(pageSize: 1) { pageSize } } }
      fragment Accounts on Query { merchantAccounts { id } statuses(pageSize: 1) { count } cardEncryptionKey { kid } webhookEndpoints { id } emails(first: 1) { pageInfo { hasNextPage } } }
      fragment Health on Query { merchantAccounts { mid } statuses(pageSize: 1) { totalCount } cardEncryptionKey { algorithm } webhookEndpoints { slug } customerLeads(first: 1) { pageInfo { hasNextPage } } }`;
    const { status, body } = await ask(composed, { as: 'tenant' });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(Object.keys(body.data).sort()).toEqual(['cardEncryptionKey', 'customerLeads', 'emails', 'merchantAccounts', 'statuses', 'webhookEndpoints']);
    expect(body.data.statuses).toEqual({ count: 1, totalCount: expect.any(Number), pageSize: 1 });

    const repeated = await ask(`{ ${Array.from({ length: 11 }, (_, i) => (i % 2 ? 'merchantAccounts { mid }' : 'merchantAccounts { id }')).join(' ')} }`, { as: 'tenant' });
    expect(repeated.status).toBe(200);
    expect(repeated.body).toEqual({ data: { merchantAccounts: expect.any(Array) } });
  });

  it('still refuses 11 distinct root fields, through fragments or as 11 aliases of one field', async () => {
    const distinct = `{ ...A ...B }
      fragment A on Query { cardEncryptionKey { kid } email(id: "${randomUUID()}") { id } emails { pageInfo { hasNextPage } } customerLeads { pageInfo { hasNextPage } } merchantAccounts { id } merchantAccountAudit { id } }
      fragment B on Query { mitigationTransactions { pageInfo { hasNextPage } } statuses { count } subscription(id: 1) { id } webhookEndpoints { id } webhookDeliveries { id } merchantAccounts { id } __typename }`;
    const statements = countStatements();
    const spread = await ask(distinct);
    expect(spread.status).toBe(400);
    expect(spread.body.errors).toEqual([expect.objectContaining({ message: 'An operation may select at most 10 root fields; this one has 11', extensions: { code: 'TOO_MANY_ROOT_FIELDS' } })]);

    // An alias is its own response key: each of these runs its own read, even with the same arguments.
    const aliased = await ask(`{ ${Array.from({ length: 11 }, (_, i) => `a${i}: merchantAccounts { id }`).join(' ')} }`);
    expect(aliased.status).toBe(400);
    expect(aliased.body.errors).toEqual([expect.objectContaining({ message: 'An operation may select at most 10 root fields; this one has 11', extensions: { code: 'TOO_MANY_ROOT_FIELDS' } })]);
    expect(statements()).toBe(0);
  });

  it('costs pages by their size, variables included, and refuses a query over budget with QUERY_TOO_COMPLEX', async () => {
    const query = `query($size: Int) { ${Array.from({ length: 7 }, (_, i) => `p${i}: statuses(pageSize: $size, pageNumber: ${i + 1}) { ${STATUS_FIELDS} }`).join(' ')} }`;
    const statements = countStatements();
    const refused = await ask(query, { variables: { size: 200 } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^The query costs 21070, over the limit of 20000/), extensions: { code: 'QUERY_TOO_COMPLEX' } }),
    ]);
    expect(statements()).toBe(0);

    const small = await ask(query, { variables: { size: 5 } });
    expect(small.status).toBe(200);
    expect(small.body.data.p0.data).toHaveLength(5);
  });

  it('costs a page size below 1 as the default: a negative one takes nothing off the total', async () => {
    const pages = Array.from({ length: 7 }, (_, i) => `p${i}: statuses(pageSize: 200, pageNumber: ${i + 1}) { ${STATUS_FIELDS} }`).join(' ');
    for (const negative of ['-1000000', '$n']) {
      const statements = countStatements();
      const declared = negative === '$n' ? '($n: Int)' : '';
      const refused = await ask(`query${declared} { ${pages} x: statuses(pageSize: ${negative}) { ${STATUS_FIELDS} } }`, { variables: negative === '$n' ? { n: -2_000_000_000 } : {} });
      expect(refused.status, negative).toBe(400);
      expect(refused.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
      expect(statements(), 'no statement ran').toBe(0);
    }
  });

  it('refuses nesting deeper than 15 with QUERY_TOO_DEEP', async () => {
    const chain = (levels: number) => `${'ofType { '.repeat(levels)}name${' }'.repeat(levels)}`;
    const deep = await ask(`{ __type(name: "Query") { ${chain(14)} } }`);
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0]).toMatchObject({ message: 'An operation may nest fields at most 15 deep; this one nests 16', extensions: { code: 'QUERY_TOO_DEEP' } });
    expect((await ask(`{ __type(name: "Query") { ${chain(13)} } }`)).body).toEqual({ data: { __type: expect.objectContaining({ ofType: null }) } });
  });
});

describe('mutations: one side effect per request', () => {
  it('refuses aliased mutations with TOO_MANY_MUTATIONS and creates no key', async () => {
    const before = await cardKeyCount();
    const { status, body } = await ask(`mutation { ${Array.from({ length: 799 }, (_, i) => `k${i}: rotateCardEncryptionKey { kid }`).join(' ')} }`, { as: 'tenant' });
    expect(status).toBe(400);
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: 'A request may run at most 1 mutation field; this one has 799. Send each mutation as its own request',
        extensions: { code: 'TOO_MANY_MUTATIONS' },
      }),
    ]);
    expect(await cardKeyCount()).toBe(before);
  });

  it('refuses two different mutations, and mutations hidden in fragments', async () => {
    const before = await cardKeyCount();
    const mixed = await ask(`mutation { rotateCardEncryptionKey { kid } sendTestWebhook(endpointId: "${randomUUID()}") }`, { as: 'tenant' });
    expect(mixed.body.errors[0].extensions.code).toBe('TOO_MANY_MUTATIONS');
    const fragments = await ask('mutation { ...A ...B } fragment A on Mutation { a: rotateCardEncryptionKey { kid } } fragment B on Mutation { b: rotateCardEncryptionKey { kid } }', { as: 'tenant' });
    expect(fragments.body.errors[0].extensions.code).toBe('TOO_MANY_MUTATIONS');
    expect(await cardKeyCount()).toBe(before);
  });

  it('counts a mutation selected twice under one response key once: it runs once', async () => {
    // The same field with the same arguments merges into one call; GraphQL answers one NOT_FOUND for it.
    const doubled = await ask(`mutation { cancelSubscription(id: 2147483000) { id } ...Also } fragment Also on Mutation { cancelSubscription(id: 2147483000) { state } }`, { as: 'tenant' });
    expect(doubled.status).toBe(200);
    expect(doubled.body.errors).toEqual([expect.objectContaining({ path: ['cancelSubscription'], extensions: expect.objectContaining({ code: 'NOT_FOUND' }) })]);

    await ageCardKeys(app, tenant.id);
    const before = await cardKeyCount();
    const twice = await ask('mutation { rotateCardEncryptionKey { kid } rotateCardEncryptionKey { algorithm } }', { as: 'tenant' });
    expect(twice.status).toBe(200);
    // A second run would be refused as too soon, an error beside the data: none means it ran once.
    expect(twice.body.errors).toBeUndefined();
    expect(twice.body.data.rotateCardEncryptionKey).toEqual({ kid: expect.any(String), algorithm: 'RSA-OAEP-256' });
    expect(await cardKeyCount()).toBe(before + 1);
  });

  it('still refuses two different mutations, the same mutation under two aliases, or with two different arguments', async () => {
    const before = await cardKeyCount();
    const id = 2147483000;
    for (const mutation of [
      `mutation { cancelSubscription(id: ${id}) { id } pauseSubscription(id: ${id}) { id } }`,
      `mutation { cancelSubscription(id: ${id}) { id } ...Other } fragment Other on Mutation { rotateCardEncryptionKey { kid } }`,
      `mutation { a: cancelSubscription(id: ${id}) { id } b: cancelSubscription(id: ${id}) { id } }`,
      // Same response key, different arguments: GraphQL refuses the conflict too; the limit still counts two.
      `mutation { cancelSubscription(id: ${id}) { id } cancelSubscription(id: ${id - 1}) { id } }`,
    ]) {
      const { status, body } = await ask(mutation, { as: 'tenant' });
      expect(status, mutation).toBe(400);
      expect(body.errors, mutation).toContainEqual(
        expect.objectContaining({ message: 'A request may run at most 1 mutation field; this one has 2. Send each mutation as its own request', extensions: { code: 'TOO_MANY_MUTATIONS' } }),
      );
    }
    expect(await cardKeyCount()).toBe(before);
  });

  it('runs a single mutation, creating exactly one key', async () => {
    await ageCardKeys(app, tenant.id);
    const before = await cardKeyCount();
    const { status, body } = await ask('mutation { rotateCardEncryptionKey { kid algorithm } }', { as: 'tenant' });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.rotateCardEncryptionKey).toMatchObject({ kid: expect.any(String), algorithm: 'RSA-OAEP-256' });
    expect(await cardKeyCount()).toBe(before + 1);
  });
});

describe('introspection', () => {
  it('is refused to anonymous callers, however it is asked', async () => {
    for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "Query") { name } }', '{ ...F } fragment F on Query { __schema { types { name } } }']) {
      const { status, body } = await ask(query, { as: 'anonymous' });
      expect(status).toBe(401);
      expect(body.errors).toEqual([expect.objectContaining({ extensions: { code: 'UNAUTHENTICATED' } })]);
      expect(body.data).toBeUndefined();
    }
    expect((await ask('{ __typename }', { as: 'anonymous' })).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('refuses a subscription (this API has none) as a bad request with its own code, never an internal error', async () => {
    for (const as of ['anonymous', 'tenant'] as const) {
      const { status, body } = await ask('subscription { __typename }', { as });
      expect(status, as).toBe(400);
      expect(body.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/no subscription operations/), extensions: { code: 'OPERATION_NOT_SUPPORTED' } })]);
    }
  });

  it('does not leak through "Did you mean" hints to anonymous callers; a tenant key keeps them', async () => {
    for (const query of ['{ customerLead { id } }', '{ statuses(pageSiz: 5) { count } }', '{ statuses { dat { id } } }']) {
      const anonymous = await ask(query, { as: 'anonymous' });
      expect(anonymous.status, query).toBe(400);
      expect(anonymous.body.errors.length).toBeGreaterThan(0);
      for (const error of anonymous.body.errors) expect(error.message, query).not.toMatch(/Did you mean/);
    }
    const withKey = await ask('{ customerLead { id } }', { as: 'tenant' });
    expect(withKey.body.errors[0].message).toMatch(/Did you mean "customerLeads"\?/);
  });

  it('answers the full introspection query to a tenant key', async () => {
    const full = getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true });
    const { status, body } = await ask(full, { as: 'tenant' });
    expect(status).toBe(200);
    expect(body.data.__schema.types.map((type: { name: string }) => type.name)).toContain('StatusPage');
  });

  it('refuses the schema asked twice under aliases, even by an authenticated caller', async () => {
    const twice = getIntrospectionQuery().replace('__schema {', 'again: __schema { types { ...FullType } } __schema {');
    const { status, body } = await ask(twice, { as: 'tenant' });
    expect(status).toBe(400);
    expect(body.errors[0]).toMatchObject({ message: expect.stringMatching(/^The introspection costs \d+, more than the full introspection query/), extensions: { code: 'QUERY_TOO_COMPLEX' } });
  });
});

describe('batched look-ups', () => {
  async function addDeliveries(endpoint: WebhookEndpoint, count: number) {
    const em = app.orm.em.fork();
    for (let i = 0; i < count; i += 1) {
      const delivery = em.create(WebhookDelivery, { id: `msg_${randomUUID()}`, tenant: tenant.id, endpoint: endpoint.id, eventType: 'webhook.test', body: '{}', state: 'delivered', attemptCount: 2 });
      for (const attemptNumber of [1, 2]) {
        em.create(WebhookAttempt, { delivery, attemptNumber, attemptedAt: new Date(), httpStatus: attemptNumber === 1 ? 503 : 200, latencyMs: 5, error: null, responseSnippet: null });
      }
    }
    await em.flush();
  }

  it('reads attempts and endpoints for a whole page, under any aliases, with the same number of statements', async () => {
    const em = app.orm.em.fork();
    const endpoint = em.create(WebhookEndpoint, { id: randomUUID(), tenant: tenant.id, slug: `batch-${randomUUID().slice(0, 8)}`, url: 'https://example.com/hooks', secretCiphertext: 'unused' });
    await em.flush();
    const query = `query($tenantId: Int, $endpointId: UUID) {
      a: webhookDeliveries(tenantId: $tenantId, endpointId: $endpointId) { id attempts { attemptNumber httpStatus } endpoint { slug } }
      b: webhookDeliveries(tenantId: $tenantId, endpointId: $endpointId) { attempts { attemptNumber } endpoint { url } }
    }`;
    const statementsFor = async (deliveries: number) => {
      const statements = countStatements();
      const { body } = await ask(query, { variables: { tenantId: tenant.id, endpointId: endpoint.id } });
      expect(body.data.a).toHaveLength(deliveries);
      expect(body.data.a[0]).toMatchObject({ attempts: [{ attemptNumber: 1, httpStatus: 503 }, { attemptNumber: 2, httpStatus: 200 }], endpoint: { slug: endpoint.slug } });
      expect(body.data.b[0].endpoint).toEqual({ url: 'https://example.com/hooks' });
      vi.restoreAllMocks();
      return statements();
    };

    await addDeliveries(endpoint, 1);
    const forOne = await statementsFor(1);
    await addDeliveries(endpoint, 4);
    expect(await statementsFor(5)).toBe(forOne);
  });
});

describe('hostile text in arguments', () => {
  const expectRefused = (result: { status: number; body: any }, field: string) => {
    expect(result.status).toBe(400);
    expect(result.body.errors).toEqual([
      { message: `${field} must not contain a NUL character (U+0000) or an unpaired UTF-16 surrogate`, locations: expect.any(Array), extensions: { code: 'BAD_USER_INPUT', field } },
    ]);
  };

  it('refuses a NUL byte written in the query, or sent as a variable, naming the argument', async () => {
    const statements = countStatements();
    expectRefused(await ask('{ statuses(search: "decl\\u0000ined") { count } }'), 'search');
    expectRefused(await ask('query($s: String) { statuses(search: $s) { count } }', { variables: { s: 'a\u0000' } }), 'search');
    expectRefused(await ask('query($s: String = "\\u0000") { statuses(search: $s) { count } }'), 'search');
    expect(statements()).toBe(0);
  });

  it('refuses unpaired surrogates, and checks inside JSON inputs down to their keys', async () => {
    expectRefused(await ask('query($s: String) { statuses(search: $s) { count } }', { variables: { s: 'x\uD800' } }), 'search');
    expectRefused(await ask('query($s: String) { statuses(search: $s) { count } }', { variables: { s: '\uDC00x' } }), 'search');
    const fixture = (text: string) => ({ tenants: [{ slug: 'hostile', name: text, clientId: 'hostile' }] });
    expectRefused(await ask('mutation($f: JSONObject!) { provisionTenants(fixture: $f) { id } }', { variables: { f: fixture('a\u0000') } }), 'fixture.tenants[0].name');
    expectRefused(await ask('mutation($f: JSONObject!) { provisionTenants(fixture: $f) { id } }', { variables: { f: { tenants: [{ 'sl\uD83Dug': 'x' }] } } }), 'fixture.tenants[0]');
  });

  it('refuses a number JSON cannot hold (1e309 parses to Infinity) in a variable or a literal, naming it', async () => {
    const mutation = 'mutation($f: JSONObject!) { provisionTenants(fixture: $f) { id } }';
    const raw = `{"query":${JSON.stringify(mutation)},"variables":{"f":{"tenants":[{"slug":"infinite","rateLimitPerMinute":1e309}]}}}`;
    const response = await fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${app.config.operatorToken}` }, body: raw });
    expect(response.status).toBe(400);
    const field = 'fixture.tenants[0].rateLimitPerMinute';
    expect(((await response.json()) as any).errors).toEqual([
      { message: `${field} must be a number JSON can hold (this one is beyond ±1.8e308)`, locations: expect.any(Array), extensions: { code: 'BAD_USER_INPUT', field } },
    ]);
    const literal = await ask('mutation { provisionTenants(fixture: { tenants: [{ slug: "infinite", rateLimitPerMinute: 1e309 }] }) { id } }');
    expect(literal.status).toBe(400);
    expect(literal.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', field });
  });

  it('finds text nested thousands deep, and reports a bounded path', async () => {
    let nested: unknown = 'x\u0000';
    for (let depth = 0; depth < 3000; depth += 1) nested = [nested];
    const { status, body } = await ask('mutation($f: JSONObject!) { provisionTenants(fixture: $f) { id } }', { variables: { f: { deep: nested } } });
    expect(status).toBe(400);
    expect(body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', field: `fixture.deep${'[0]'.repeat(62)}[0…` });
  });

  it('keeps a paired surrogate (an emoji) as ordinary text', async () => {
    const { status, body } = await ask('query($s: String) { statuses(search: $s) { count } }', { variables: { s: 'card 💳' } });
    expect(status).toBe(200);
    expect(body.data.statuses.count).toBe(0);
  });

  it('never answers a 500 or INTERNAL_SERVER_ERROR, whatever text an argument holds', async () => {
    const hostileUnit = fc.oneof(fc.constantFrom('\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uD83D\uDCB3', '%', '_', '\\', "'", '"'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));
    const text = fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: hostileUnit, maxLength: 300 }) },
      { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 100_000 }).map((length) => 'x\u0000'.repeat(length)) },
    );
    const unsafe = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    const neverInternal = (result: { status: number; body: any }) => {
      expect(result.status).toBeLessThan(500);
      if (typeof result.body === 'object') {
        for (const error of result.body.errors ?? []) expect(error.extensions?.code).not.toBe('INTERNAL_SERVER_ERROR');
      }
    };
    await fc.assert(
      fc.asyncProperty(text, async (s) => {
        const asVariable = await ask('query($s: String) { statuses(search: $s) { count } }', { variables: { s } });
        neverInternal(asVariable);
        if (unsafe.test(s) && asVariable.status !== 413) expect(asVariable.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'search' });
        neverInternal(await ask(`{ statuses(search: ${JSON.stringify(s)}) { count } }`));
        neverInternal(await ask('query($s: UUID) { webhookDeliveries(tenantId: 1, endpointId: $s) { id } }', { variables: { s } }));
        neverInternal(await ask('mutation($f: JSONObject!) { provisionTenants(fixture: $f) { id } }', { variables: { f: { tenants: [{ slug: s }] } } }));
      }),
      { numRuns: 60 },
    );
  });
});

describe('the lead data one answer carries', () => {
  it('refuses a page whose scans, repeated under aliases, would carry more than 16 MB: one PAYLOAD_TOO_LARGE and no data; the page itself answers', async () => {
    const shop = await createLeadTenant(app);
    // 30 leads, each with about 240 KB of visited pages (the most a lead write's 256 KB body holds).
    const scans = Array.from({ length: 117 }, (_, i) => ({ page: `https://shop.example/${i}/${'p'.repeat(2000)}` }));
    for (let i = 0; i < 30; i++) {
      const written = await postLead(app.baseUrl, { session_id: newSessionId(), email: `big${i}@example.com`, scans }, bearer(shop.keys.test.secretKey));
      expect(written.status).toBe(201);
    }
    const read = (selection: string) =>
      fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${shop.apiKey}` },
        body: JSON.stringify({ query: `{ customerLeads(first: 30) { edges { node { id ${selection} } } } }` }),
      }).then(async (response) => ({ status: response.status, text: await response.text() }));

    // Each lead's data once: about 7 MB, answered in full.
    const page = await read('scans pendingData trackingFields');
    expect(page.status).toBe(200);
    const leads = JSON.parse(page.text).data.customerLeads.edges;
    expect(leads).toHaveLength(30);
    expect(leads.every((edge: any) => edge.node.scans.length === 117)).toBe(true);

    // The same scans under three aliases: about 21 MB, refused as a whole.
    const repeated = await read('scans a: scans b: scans');
    expect(repeated.text.length).toBeLessThan(1_000);
    expect(JSON.parse(repeated.text)).toEqual({
      data: null,
      errors: [{ message: expect.stringContaining('more than 16 MB of lead data'), extensions: { code: 'PAYLOAD_TOO_LARGE' } }],
    });

    // The pages are read before any value is counted: a lead's data costs as much as sixty fields, so one request reads
    // at most a page of 100 leads with all of it, or three with their scans. Four such pages are refused unread.
    const pages = Array.from({ length: 4 }, (_, i) => `p${i}: customerLeads(first: 100) { edges { node { scans } } }`).join(' ');
    const statements = countStatements();
    const refused = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${app.config.operatorToken}` },
      body: JSON.stringify({ query: `{ ${pages.replaceAll('customerLeads(first: 100)', `customerLeads(first: 100, tenantId: ${shop.id})`)} }` }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(statements()).toBe(0);
  });
});
