import pWaitFor from 'p-wait-for';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createReadinessProbes } from '../api/readiness-probes.ts';
import { healthRoutes } from '../api/rest/health.routes.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant } from './support/tenants.ts';

let app: TestApp;
let second: TestApp;
/** Both gateways count rate-limit windows by this clock; a test may stop it so a window cannot roll over. */
let stoppedAt: Date | undefined;
const now = () => stoppedAt ?? new Date();

beforeAll(async () => {
  app = await startTestApp({ BODY_LIMIT_BYTES: '4096' }, { now });
  second = await startTestApp({}, { now });
});
afterAll(async () => {
  await app?.close();
  await second?.close();
});

describe('health', () => {
  it('healthz answers while the process is up', async () => {
    const response = await fetch(`${app.baseUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('readyz is 503 until a worker polls the task queue, then 200', async () => {
    const before = await fetch(`${app.baseUrl}/readyz`);
    expect(before.status).toBe(503);
    expect(await before.json()).toMatchObject({ status: 'not_ready', checks: { postgres: 'ok', temporal: 'ok', worker: expect.stringContaining('no worker') } });
    await app.startWorker();
    // The worker's first poll reaches Temporal a moment after it starts.
    const ready = await pWaitFor(
      async () => {
        const response = await fetch(`${app.baseUrl}/readyz`);
        return response.status === 200 && pWaitFor.resolveWith(await response.json());
      },
      { interval: 100 },
    );
    expect(ready).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok', worker: 'ok' } });
  });
});

describe('readyz while a dependency does not answer', () => {
  it('is 503 within its probe time limit, naming the silent dependency, rather than hanging with it', async () => {
    // A real database that takes its time (a frozen server, a lock storm), beside the real Temporal probes.
    const probes = createReadinessProbes({ orm: app.orm, temporal: app.temporal.connection, namespace: app.config.temporalNamespace, taskQueue: app.taskQueue });
    const server = Fastify().withTypeProvider<TypeBoxTypeProvider>();
    healthRoutes(server, { ...probes, postgres: async () => void (await app.orm.em.fork().execute('select pg_sleep(3)')) }, { probeTimeoutMs: 500 });
    onTestFinished(() => server.close());
    const answer = await server.inject({ method: 'GET', url: '/readyz' });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({ status: 'not_ready', checks: { postgres: 'no answer within 0.5 s', temporal: 'ok' } });
  });
});

describe('bad input never gives a 500', () => {
  it('malformed JSON on /graphql is a 400 in GraphQL\'s error shape', async () => {
    const response = await fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ errors: [{ message: 'Invalid JSON body', extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('a body over the limit is a 413', async () => {
    const response = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ __typename } # ${'x'.repeat(5000)}` }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ errors: [{ message: 'Request body too large', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
  });

  it('a body that is not JSON is a 415, plain text included', async () => {
    for (const [type, body] of [['application/xml', '<q/>'], ['text/plain', 'hello']]) {
      const response = await fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': type! }, body });
      expect(response.status, type).toBe(415);
      expect(await response.json()).toEqual({ errors: [{ message: 'Content-Type must be application/json', extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' } }] });
    }
  });

  it("a path the router refuses (too long a segment, broken percent-encoding) answers in its API's shape, never Fastify's", async () => {
    const long = 'x'.repeat(600);
    const cases: [string, string, number, unknown][] = [
      ['PUT', `/api/admin/merchantaccounts/${long}`, 404, { success: false, message: expect.stringContaining('a path segment is longer than 500 characters') }],
      ['POST', `/api/${long}`, 404, { success: false, message: expect.stringContaining('Nothing at /api/xxx') }],
      ['GET', `/payments/pay_${long}`, 404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: expect.stringContaining('Nothing at /payments/pay_x') } }],
      ['GET', '/api/admin/merchantaccounts/%zz', 400, { success: false, message: 'The path is not valid percent-encoding' }],
      ['POST', '/subscriptions/%e0%a4%a/cancel', 400, { error: { type: 'invalid_request_error', code: 'url_invalid', message: 'The path is not valid percent-encoding' } }],
    ];
    for (const [method, path, status, body] of cases) {
      const response = await fetch(`${app.baseUrl}${path}`, { method });
      expect({ path: path.slice(0, 40), status: response.status, body: await response.json() }).toEqual({ path: path.slice(0, 40), status, body });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('an unknown route is a 404 in the error shape', async () => {
    const response = await fetch(`${app.baseUrl}/api/admin/nothing-here`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ success: false, message: 'No route GET /api/admin/nothing-here' });
  });

  it('a GraphQL query with a wrong variable type is a 4xx with a GraphQL error', async () => {
    const tenant = await createTestTenant(app);
    const response = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
      body: JSON.stringify({ query: 'query($n: Int) { statuses(pageSize: $n) { count } }', variables: { n: 'many' } }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('request ids', () => {
  it('echoes a caller-supplied x-request-id and logs it', async () => {
    const response = await fetch(`${app.baseUrl}/healthz`, { headers: { 'x-request-id': 'trace-123' } });
    expect(response.headers.get('x-request-id')).toBe('trace-123');
    expect(app.logs.lines.some((line) => JSON.parse(line).reqId === 'trace-123')).toBe(true);
  });
});

describe('rate limit', () => {
  it('holds across two gateway processes sharing PostgreSQL, with Retry-After', async () => {
    const tenant = await createTestTenant(app, { rateLimitPerMinute: 5 });
    // Twenty seconds into a minute window, whatever the wall clock says.
    stoppedAt = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 20_000);
    onTestFinished(() => {
      stoppedAt = undefined;
    });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 7; i++) {
      const base = i % 2 === 0 ? app.baseUrl : second.baseUrl;
      const response = await fetch(`${base}/api/admin/statuses?pageSize=1`, { headers: tenant.adminHeaders });
      statuses.push(response.status);
      if (response.status === 429) {
        retryAfter = response.headers.get('retry-after');
        expect(await response.json()).toEqual({ success: false, message: expect.stringContaining('Rate limit') });
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // Five in this window: admitted again 12 s into the next (when 1 + 5 × (1 − 0.2) ≤ 5), 40 + 12 s from now.
    expect(retryAfter).toBe('52');
    // Another tenant's key is counted separately.
    const other = await createTestTenant(app, { rateLimitPerMinute: 5 });
    expect((await fetch(`${app.baseUrl}/api/admin/statuses?pageSize=1`, { headers: other.adminHeaders })).status).toBe(200);
  });
});

describe('logs', () => {
  it('never contain an API key or the Authorization header', async () => {
    const tenant = await createTestTenant(app);
    await fetch(`${app.baseUrl}/api/admin/statuses`, { headers: tenant.adminHeaders });
    await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
      body: JSON.stringify({ query: '{ statuses { count } }' }),
    });
    expect(app.logs.text()).not.toContain(tenant.apiKey);
    expect(app.logs.lines.length).toBeGreaterThan(0);
  });

  it('never contain a card number sent in a URL: path, query string or GraphQL variables over GET', async () => {
    const tenant = await createTestTenant(app);
    const pans = ['5555555555554444', '378282246310005', '4111 1111 1111 1111', '6011000990139424'];
    const before = app.logs.lines.length;
    await fetch(`${app.baseUrl}/payments?email=${pans[0]}`, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
    const variables = encodeURIComponent(JSON.stringify({ e: pans[1] }));
    await fetch(`${app.baseUrl}/graphql?query=${encodeURIComponent('query($e: String) { statuses(search: $e) { count } }')}&variables=${variables}`, {
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'apollo-require-preflight': 'true' },
    });
    await fetch(`${app.baseUrl}/payments?email=${encodeURIComponent(pans[2]!)}`, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
    await fetch(`${app.baseUrl}/payments/${pans[3]}`, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
    const logged = app.logs.lines.slice(before);
    // The requests were logged (their method and path), the numbers not.
    expect(logged.filter((line) => JSON.parse(line).req?.method === 'GET').length).toBeGreaterThanOrEqual(4);
    for (const pan of pans) {
      expect(logged.filter((line) => line.includes(pan) || line.includes(pan.replaceAll(' ', '%20')))).toEqual([]);
    }
  });
});

describe('tenant isolation in GraphQL', () => {
  it("a tenant key reads only its own webhook endpoints and deliveries", async () => {
    const a = await createTestTenant(app, { webhookEndpoints: [{ slug: 'a', url: 'https://a.example/hooks' }] });
    const b = await createTestTenant(app, { webhookEndpoints: [{ slug: 'b', url: 'https://b.example/hooks' }] });
    const ask = async (apiKey: string, query: string) => {
      const response = await fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify({ query }) });
      return (await response.json()) as any;
    };
    const own = await ask(a.apiKey, '{ webhookEndpoints { slug url } }');
    expect(own.data.webhookEndpoints).toEqual([{ slug: 'a', url: 'https://a.example/hooks' }]);
    // An endpoint stored before provisioning checked URLs, holding one no URL parser takes: listed as stored, never
    // an error that hides the tenant's other endpoints.
    await app.orm.em.fork().execute(
      `insert into webhook_endpoints (id, tenant_id, slug, url, secret_ciphertext, event_types, created_at, updated_at)
       select gen_random_uuid(), tenant_id, 'typo', 'https://hooks.example.com:80800/typo', secret_ciphertext, event_types, now(), now() from webhook_endpoints where tenant_id = ?`,
      [a.id],
    );
    const listed = await ask(a.apiKey, '{ webhookEndpoints { slug url } }');
    expect(listed).toEqual({ data: { webhookEndpoints: [{ slug: 'a', url: 'https://a.example/hooks' }, { slug: 'typo', url: 'https://hooks.example.com:80800/typo' }] } });
    const other = await ask(a.apiKey, `{ webhookDeliveries(tenantId: ${b.id}) { id } }`);
    expect(other.errors[0].extensions.code).toBe('FORBIDDEN');
    const test = await ask(a.apiKey, `mutation { sendTestWebhook(endpointId: "${b.result.webhookEndpoints[0]!.id}") }`);
    expect(test.errors[0].extensions.code).toBe('NOT_FOUND');
  });
});
