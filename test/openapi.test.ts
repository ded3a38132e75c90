import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import createClient from 'openapi-fetch';
import openapiTS from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import type { paths } from './support/openapi-client/paths.ts';
import { bearer, createLeadTenant, getLeads, newSessionId, postLead } from './support/leads.ts';
import { createPaymentTenant, post, submitBody, type PaymentTenant } from './support/payments.ts';
import { createEmailTenant, postEmail } from './support/smtp-email.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const TEMPORAL_UI_URL = 'http://127.0.0.1:8233';

let app: TestApp;
let tenant: PaymentTenant;
let document: any;

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_UI_URL });
  await app.startWorker();
  tenant = await createPaymentTenant(app);
  document = await (await fetch(`${app.baseUrl}/openapi.json`)).json();
});
afterAll(() => app?.close());

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

/** Runs the redocly CLI with the repository's redocly.yaml over a copy of the served document. */
async function redoclyLint(served: unknown): Promise<{ totals: { errors: number; warnings: number }; problems: LintProblem[] }> {
  const directory = await mkdtemp(path.join(tmpdir(), 'openapi-lint-'));
  try {
    const file = path.join(directory, 'openapi.json');
    await writeFile(file, JSON.stringify(served));
    const cli = path.join(REPO_ROOT, 'node_modules/.bin/redocly');
    const args = [cli, 'lint', '--config', path.join(REPO_ROOT, 'redocly.yaml'), '--format', 'json', file];
    // No telemetry or update check: the suite must not reach the internet.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    // The CLI exits non-zero when it finds errors; its report is on stdout either way.
    const stdout = await promisify(execFile)(process.execPath, args, { env, cwd: directory }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    return JSON.parse(stdout);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Checks a real answer against the response schema the document gives for its operation and status. */
function expectDocumented(pathName: string, method: string, status: number, body: unknown) {
  const pointer = `#/paths/${pathName.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/${status}/content/application~1json/schema`;
  const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false });
  ajv.addSchema(document, 'openapi.json');
  const validate = ajv.compile({ $ref: `openapi.json${pointer}` });
  expect(validate(body) ? [] : validate.errors, `${method.toUpperCase()} ${pathName} ${status}`).toEqual([]);
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document covering every REST route', async () => {
    const validation = await new Validator().validate(document);
    expect(validation.errors ?? []).toEqual([]);
    expect(validation.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths).sort()).toEqual([
      '/',
      '/3ds/{threeDSecureId}',
      '/api/admin/merchantaccounts',
      '/api/admin/merchantaccounts/{id}',
      '/api/admin/statuses',
      '/api/email',
      '/api/email/batch',
      '/api/mitigation/transactions',
      '/api/public/customer-leads',
      '/api/{productId}',
      '/api/{productId}/3ds',
      '/healthz',
      '/leads.js',
      '/openapi.json',
      '/payments',
      '/payments/{id}',
      '/payments/{id}/capture',
      '/payments/{id}/refund',
      '/payments/{id}/refunds',
      '/payments/{id}/void',
      '/readyz',
      '/subscriptions/{id}',
      '/subscriptions/{id}/cancel',
      '/subscriptions/{id}/pause',
      '/subscriptions/{id}/resume',
    ]);
    for (const [pathName, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations)) {
        const url = pathName.replace(/\{(\w+)\}/g, ':$1');
        expect(app.gateway.hasRoute({ method: method.toUpperCase() as 'GET', url }), `${method} ${pathName} is served`).toBe(true);
      }
    }
  });

  it('says which routes need the API key, and the admin headers besides it', () => {
    const security = Object.fromEntries(
      Object.entries(document.paths as Record<string, Record<string, { security: unknown }>>).flatMap(([pathName, operations]) =>
        Object.entries(operations).map(([method, operation]) => [`${method.toUpperCase()} ${pathName}`, operation.security]),
      ),
    );
    const keyed = [{ apiKey: [] }];
    expect(security).toEqual({
      'GET /': [],
      'GET /openapi.json': [],
      'GET /healthz': [],
      'GET /readyz': [],
      'GET /3ds/{threeDSecureId}': [],
      'POST /api/email': [],
      'POST /api/email/batch': [],
      'GET /api/admin/statuses': keyed,
      'GET /api/admin/merchantaccounts': keyed,
      'PUT /api/admin/merchantaccounts/{id}': keyed,
      'POST /api/mitigation/transactions': keyed,
      'POST /api/{productId}': keyed,
      'POST /api/{productId}/3ds': keyed,
      'POST /payments': keyed,
      'GET /payments': keyed,
      'GET /payments/{id}': keyed,
      'POST /payments/{id}/capture': keyed,
      'POST /payments/{id}/void': keyed,
      'POST /payments/{id}/refund': keyed,
      'GET /payments/{id}/refunds': keyed,
      'GET /subscriptions/{id}': keyed,
      'POST /subscriptions/{id}/cancel': keyed,
      'POST /subscriptions/{id}/pause': keyed,
      'POST /subscriptions/{id}/resume': keyed,
      'POST /api/public/customer-leads': [{ leadSecretKey: [] }, { leadPublishableKey: [] }],
      'GET /api/public/customer-leads': [{ leadSecretKey: [] }],
      'OPTIONS /api/public/customer-leads': [],
      'GET /leads.js': [],
    });
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    const statusParameters = document.paths['/api/admin/statuses'].get.parameters.map((p: { name: string; in: string; required: boolean }) => `${p.in}:${p.name}:${p.required}`);
    expect(statusParameters).toEqual(
      expect.arrayContaining(['query:pageNumber:false', 'query:pageSize:false', 'query:search:false', 'query:isOther:false', 'header:ClientId:true', 'header:UserEmail:true']),
    );
  });

  it('says which bodies may be left out: those of the actions and the refund, not a payment’s or a submit’s', () => {
    const bodies = Object.entries(document.paths as Record<string, Record<string, { requestBody?: { required: boolean } }>>).flatMap(([pathName, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) => (operation.requestBody ? [[`${method.toUpperCase()} ${pathName}`, operation.requestBody.required]] : [])),
    );
    expect(Object.fromEntries(bodies)).toMatchObject({
      'POST /payments/{id}/capture': false,
      'POST /payments/{id}/void': false,
      'POST /payments/{id}/refund': false,
      'POST /subscriptions/{id}/cancel': false,
      'POST /subscriptions/{id}/pause': false,
      'POST /subscriptions/{id}/resume': false,
      'POST /payments': true,
      'POST /api/{productId}': true,
      'POST /api/{productId}/3ds': true,
      'POST /api/public/customer-leads': true,
    });
  });

  it('passes redocly lint with the recommended rules', async () => {
    const report = await redoclyLint(document);
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    // Deliberate: probes, the document itself and the lead snippet cannot fail with a 4xx, and the 3-D Secure link is a redirect.
    const warnings = report.problems.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}`).sort();
    expect(warnings).toEqual([
      'operation-2xx-response #/paths/~13ds~1{threeDSecureId}/get/responses',
      'operation-4xx-response #/paths/~1/get/responses',
      'operation-4xx-response #/paths/~1healthz/get/responses',
      'operation-4xx-response #/paths/~1leads.js/get/responses',
      'operation-4xx-response #/paths/~1openapi.json/get/responses',
      'operation-4xx-response #/paths/~1readyz/get/responses',
    ]);
  });

  it('matches the committed client types (regenerate with `npx vitest run test/openapi.test.ts -u`)', async () => {
    await expect(await openapiTS(document)).toMatchFileSnapshot('./support/openapi-client/paths.ts');
  });

  it('describes real answers: an approved submit, request errors, the status list, customer leads and the probes', async () => {
    const approved = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4242424242424242'));
    expect(approved.status).toBe(200);
    expectDocumented('/api/{productId}', 'post', 200, approved.body);

    const unknownField = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4242424242424242', { coupon: 'FREE' }));
    expect(unknownField).toEqual({ status: 400, body: { success: false, message: 'coupon is not a known field' } });
    expectDocumented('/api/{productId}', 'post', 400, unknownField.body);

    const noKey = await post(app, `/api/${tenant.productId}`, '', submitBody('4242424242424242'));
    expect(noKey.status).toBe(401);
    expectDocumented('/api/{productId}', 'post', 401, noKey.body);

    const statuses = await fetch(`${app.baseUrl}/api/admin/statuses?pageSize=2&successful=true`, { headers: tenant.adminHeaders });
    expect(statuses.status).toBe(200);
    expectDocumented('/api/admin/statuses', 'get', 200, await statuses.json());

    const leadTenant = await createLeadTenant(app);
    const secret = bearer(leadTenant.keys.test.secretKey);
    const sessionId = newSessionId();
    const created = await postLead(app.baseUrl, { email: 'doc@example.com', session_id: sessionId, cfa_device: 'mobile', scans: [{ page: '/checkout' }] }, secret);
    expect(created.status).toBe(201);
    expectDocumented('/api/public/customer-leads', 'post', 201, created.body);
    const invalid = await postLead(app.baseUrl, { session_id: sessionId, status: 'paid' }, secret);
    expect(invalid.status).toBe(422);
    expectDocumented('/api/public/customer-leads', 'post', 422, invalid.body);
    const listed = await getLeads(app.baseUrl, { session_id: sessionId }, secret);
    expect(listed.body.data).toHaveLength(1);
    expectDocumented('/api/public/customer-leads', 'get', 200, listed.body);
    const badLimit = await getLeads(app.baseUrl, { limit: '101' }, secret);
    expect(badLimit.status).toBe(400);
    expectDocumented('/api/public/customer-leads', 'get', 400, badLimit.body);

    // A browser's preflight and the snippet it loads: the headers and content type the document names.
    const origin = `https://doc-${randomUUID()}.example`;
    await createLeadTenant(app, { origins: [origin] });
    const preflight = await fetch(`${app.baseUrl}/api/public/customer-leads`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    const preflightHeaders = Object.keys(document.paths['/api/public/customer-leads'].options.responses['204'].headers);
    expect(preflightHeaders.length).toBeGreaterThan(0);
    for (const name of preflightHeaders) expect(preflight.headers.get(name), name).not.toBeNull();
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
    const refused = await fetch(`${app.baseUrl}/api/public/customer-leads`, { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' } });
    expect(refused.status).toBe(403);
    expectDocumented('/api/public/customer-leads', 'options', 403, await refused.json());
    const snippet = await fetch(`${app.baseUrl}/leads.js`);
    expect(snippet.status).toBe(200);
    expect(Object.keys(document.paths['/leads.js'].get.responses['200'].content)).toEqual([snippet.headers.get('content-type')!.split(';')[0]]);
    expect(await snippet.text()).not.toMatch(/^"/);

    // Whether the worker polls yet or not, /readyz answers one of its documented shapes.
    for (const pathName of ['/healthz', '/readyz', '/']) {
      const response = await fetch(`${app.baseUrl}${pathName}`);
      expectDocumented(pathName, 'get', response.status, await response.json());
    }
  });

  it('describes real e-mail answers: a single send, a batch, and each error body', async () => {
    const sender = await createEmailTenant(app);
    const email = { from: `shop@${sender.domain}`, to: 'doc@inbox.example', subject: 'Doc', templateType: 'string', templateContent: '<p>{{x}}</p>', data: { x: 1 } };
    const single = await postEmail(app, '/api/email', { tenant_key: sender.tenantKey, ...email });
    expect(single.status).toBe(200);
    expectDocumented('/api/email', 'post', 200, single.body);
    const batch = await postEmail(app, '/api/email/batch', { tenant_key: sender.tenantKey, emails: [email, { ...email, to: ['a@inbox.example', 'b@inbox.example'] }] });
    expect(batch.status).toBe(200);
    expectDocumented('/api/email/batch', 'post', 200, batch.body);
    const invalid = await postEmail(app, '/api/email/batch', { tenant_key: sender.tenantKey, emails: [{ ...email, to: 'nope' }] });
    expect(invalid.status).toBe(400);
    expectDocumented('/api/email/batch', 'post', 400, invalid.body);
    const unknownTenant = await postEmail(app, '/api/email', { tenant_key: '00000000-0000-4000-8000-000000000000', ...email });
    expect(unknownTenant.status).toBe(401);
    expectDocumented('/api/email', 'post', 401, unknownTenant.body);
    const otherDomain = await postEmail(app, '/api/email', { tenant_key: sender.tenantKey, ...email, from: 'x@elsewhere.example' });
    expect(otherDomain.status).toBe(403);
    expectDocumented('/api/email', 'post', 403, otherDomain.body);
  });

  it('checks the key (and an admin route its ClientId) of every route that documents one before anything the request holds', async () => {
    type Operation = { security?: Record<string, unknown>[]; parameters?: { in: string; name: string }[] };
    const keyed = Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([pathName, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.security?.some((requirement) => 'apiKey' in requirement))
        .map(([method, operation]) => ({ pathName, method, admin: operation.parameters?.some((p) => p.in === 'header' && p.name === 'ClientId') ?? false })),
    );
    expect(keyed.length).toBeGreaterThanOrEqual(15);
    expect(keyed.filter((route) => route.admin).map((route) => `${route.method} ${route.pathName}`).sort()).toEqual([
      'get /api/admin/merchantaccounts',
      'get /api/admin/statuses',
      'post /api/mitigation/transactions',
      'put /api/admin/merchantaccounts/{id}',
    ]);
    for (const { pathName, method, admin } of keyed) {
      // A path parameter no route accepts, a query string none parses and a body that is not JSON: each would be a
      // 400 (or a 404) from a caller with a key.
      const url = `${app.baseUrl}${pathName.replaceAll(/\{[^}]+\}/g, 'not%20an%20id')}?limit=many&unknown=1`;
      const hasBody = method === 'post' || method === 'put';
      for (const authorization of [undefined, 'Bearer not-a-key']) {
        const response = await fetch(url, {
          method: method.toUpperCase(),
          headers: { ...(authorization ? { authorization } : {}), ...(hasBody ? { 'content-type': 'application/json' } : {}) },
          ...(hasBody ? { body: '{"amount": ' } : {}),
        });
        const body = await response.json();
        expect({ route: `${method.toUpperCase()} ${pathName}`, authorization, status: response.status }).toEqual({ route: `${method.toUpperCase()} ${pathName}`, authorization, status: 401 });
        expectDocumented(pathName, method, 401, body);
      }
      if (!admin) continue;
      // A valid key with another tenant's ClientId: 403 before the request is looked at.
      const response = await fetch(url, {
        method: method.toUpperCase(),
        headers: { ...tenant.adminHeaders, clientid: 'someone-else', ...(hasBody ? { 'content-type': 'application/json' } : {}) },
        ...(hasBody ? { body: '{"amount": ' } : {}),
      });
      expect({ route: `${method.toUpperCase()} ${pathName}`, status: response.status }).toEqual({ route: `${method.toUpperCase()} ${pathName}`, status: 403 });
      expectDocumented(pathName, method, 403, await response.json());
    }
  });
});

describe('a checkout integrating through a client generated from the document', () => {
  it('submits an approved card with typed request and response', async () => {
    const client = createClient<paths>({ baseUrl: app.baseUrl, headers: { Authorization: `Bearer ${tenant.apiKey}` } });
    const { data, error, response } = await client.POST('/api/{productId}', {
      params: { path: { productId: String(tenant.productId) }, header: { 'Idempotency-Key': `order-${tenant.productId}-1` } },
      body: {
        card: { name: 'Ada Lovelace', pan: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getFullYear() + 2, cvv: '123' },
        email: 'ada@example.com',
        partnerSession: 'checkout-1',
      },
    });
    expect(response.status).toBe(200);
    expect(error).toBeUndefined();
    expect(data).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, amount: 19.99, last4: '4242', partnerSession: 'checkout-1' });
    expect(data!.submitOrderId).toBeGreaterThan(0);
  });

  it('gets the typed error body when the request itself is refused', async () => {
    const client = createClient<paths>({ baseUrl: app.baseUrl, headers: { Authorization: 'Bearer not-a-key' } });
    const { data, error, response } = await client.POST('/api/{productId}', {
      params: { path: { productId: String(tenant.productId) } },
      body: { email: 'ada@example.com' },
    });
    expect(response.status).toBe(401);
    expect(data).toBeUndefined();
    expect(error).toEqual({ success: false, message: 'Invalid API key' });
  });
});

describe('documentation pages', () => {
  it('serves the API reference at /docs from the gateway itself, no CDN', async () => {
    const page = await fetch(`${app.baseUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((match) => match[1]!);
    expect(scripts).toContain('/docs/static/swagger-ui-bundle.js');
    for (const script of scripts) {
      expect(script.startsWith('/docs/'), `${script} is served locally`).toBe(true);
      expect((await fetch(`${app.baseUrl}${script}`)).status, script).toBe(200);
    }
    expect(await (await fetch(`${app.baseUrl}/docs/json`)).json()).toEqual(document);
  });

  it('answers GET / with links to everything a newcomer looks for', async () => {
    const index = (await (await fetch(`${app.baseUrl}/`)).json()) as { links: Record<string, string> };
    expect(index.links).toEqual({
      apiReference: '/docs',
      openapi: '/openapi.json',
      graphql: '/graphql',
      temporalUi: TEMPORAL_UI_URL,
      health: '/healthz',
      readiness: '/readyz',
    });
    for (const link of [index.links.apiReference, index.links.openapi, index.links.health]) {
      expect((await fetch(`${app.baseUrl}${link}`)).status, link).toBe(200);
    }
  });
});
