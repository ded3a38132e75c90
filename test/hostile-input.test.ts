import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createPaymentTenant, post, submitBody, type PaymentTenant } from './support/payments.ts';
import { paymentBody } from './support/payments-api.ts';
import { bearer, createLeadTenant, newSessionId, postLead } from './support/leads.ts';

let app: TestApp;
let tenant: PaymentTenant;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
  // Every refused request counts against the key's rate limit, and this suite sends hundreds.
  tenant = await createPaymentTenant(app, { rateLimitPerMinute: 10_000 });
});
afterAll(() => app?.close());

const NUL = '\u0000';
const LONE_SURROGATE = '\uD800';

/** Orders of the tenant, to prove a refused request wrote nothing. */
async function orderCount(): Promise<number> {
  const [row] = (await app.orm.em.fork().execute(`select count(*)::int as count from orders where tenant_id = ?`, [tenant.id])) as [{ count: number }];
  return row.count;
}

describe('hostile text at the REST edge', () => {
  it.each([
    ['partnerSession', { partnerSession: `ps${NUL}1` }],
    ['campaignName', { campaignName: `spring${LONE_SURROGATE}` }],
    ['email', { email: `a${NUL}@example.com` }],
    ['props.note', { props: { note: `x${NUL}` } }],
    ['a field name in props', { props: { [`k${NUL}`]: 'v' } }],
    ['mid', { mid: `m${LONE_SURROGATE}` }],
  ])('refuses %s with a 400 naming it, before any order is written', async (field, overrides) => {
    const before = await orderCount();
    const answer = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4242424242424242', overrides));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, message: `${field} must not contain NUL bytes or unpaired surrogates` });
    expect(await orderCount()).toBe(before);
  });

  it('refuses a number JSON cannot hold (1e309 parses to Infinity, later written as null) with a 400 naming it, writing nothing', async () => {
    const before = await orderCount();
    const body = JSON.stringify(submitBody('4242424242424242', { props: { total: 0 } })).replace('"total":0', '"total":1e309');
    const answer = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, message: 'props.total must be a number JSON can hold (this one is beyond ±1.8e308)' });
    const negative = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body.replace('1e309', '-1e400'));
    expect(negative.status).toBe(400);
    expect(await orderCount()).toBe(before);
  });

  it('refuses hostile text in the 3-D Secure completion, the challenge id and the status search', async () => {
    const completion = await post(app, `/api/${tenant.productId}/3ds`, tenant.apiKey, { threeDSecureId: `3ds${NUL}`, partnerSession: 'ps' });
    expect(completion.status).toBe(400);
    expect(completion.body.message).toBe('threeDSecureId must not contain NUL bytes or unpaired surrogates');

    const challenge = await fetch(`${app.baseUrl}/3ds/abc%00def`);
    expect(challenge.status).toBe(400);

    const search = await fetch(`${app.baseUrl}/api/admin/statuses?search=${encodeURIComponent(`de${NUL}c`)}`, { headers: tenant.adminHeaders });
    expect(search.status).toBe(400);
    expect(((await search.json()) as { message: string }).message).toBe('search must not contain NUL bytes or unpaired surrogates');
  });

  it('refuses a query escape that decodes to no UTF-8 (an encoded lone surrogate, %FF) or escapes nothing, naming the parameter, not read as U+FFFD', async () => {
    for (const [query, parameter] of [['search=%ED%A0%80', 'search'], ['search=%FF', 'search'], ['search=100%', 'search'], ['search=%zz', 'search']]) {
      const answer = await fetch(`${app.baseUrl}/api/admin/statuses?${query}`, { headers: tenant.adminHeaders });
      expect(answer.status, query).toBe(400);
      expect(((await answer.json()) as { message: string }).message, query).toBe(`${parameter} must be percent-encoded UTF-8 (an escape here is no UTF-8, or a \`%\` escapes nothing)`);
    }
    // Escapes of UTF-8, and a plus, are read as ever.
    const found = await fetch(`${app.baseUrl}/api/admin/statuses?search=${encodeURIComponent('Déclin é')}+x`, { headers: tenant.adminHeaders });
    expect(found.status).toBe(200);
    // A parameter no route reads is left alone: a tracker's on the cardholder's challenge link still redirects.
    const challenge = await fetch(`${app.baseUrl}/3ds/unknown-id?ref=50%off&x=%FF`, { redirect: 'manual' });
    expect(challenge.status).not.toBe(400);
  });

  it('refuses a GraphQL GET whose query or variables hold an escape of no UTF-8, or give a parameter twice, rather than run another query', async () => {
    const graphQLGet = async (search: string) => {
      const response = await fetch(`${app.baseUrl}/graphql?${search}`, { headers: { authorization: tenant.adminHeaders.authorization!, 'apollo-require-preflight': 'true' } });
      return { status: response.status, body: (await response.json()) as { data?: { statuses: { count: number } }; errors?: { message: string; extensions: { code: string } }[] } };
    };
    const query = (search: string) => `query=${encodeURIComponent('query($s: String) { statuses(search: $s) { count } }')}${search}`;
    const refusals = [
      [`query=${encodeURIComponent('{ statuses(search: "')}%FF${encodeURIComponent('") { count } }')}`, 'query must be percent-encoded UTF-8 (an escape here is no UTF-8, or a `%` escapes nothing)'],
      [query(`&variables=${encodeURIComponent('{"s":"')}%ED%A0%80${encodeURIComponent('"}')}`), 'variables must be percent-encoded UTF-8 (an escape here is no UTF-8, or a `%` escapes nothing)'],
      [query(`&operationName=a%zz`), 'operationName must be percent-encoded UTF-8 (an escape here is no UTF-8, or a `%` escapes nothing)'],
      [`${query('')}&${query('')}`, 'query is given more than once; give it once'],
    ];
    for (const [search, message] of refusals) {
      expect(await graphQLGet(search!), search).toEqual({ status: 400, body: { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] } });
    }
    // The same query, escaped as UTF-8, runs; a parameter GraphQL does not read is left alone.
    const answer = await graphQLGet(query(`&variables=${encodeURIComponent(JSON.stringify({ s: 'Déclin' }))}&ref=50%off`));
    expect(answer.status).toBe(200);
    expect(answer.body.data?.statuses.count).toEqual(expect.any(Number));
  });

  it('never answers 500 to hostile strings, numbers or shapes in any field of a submit', async () => {
    const hostileString = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.constantFrom(NUL, LONE_SURROGATE, '\uDC00x', 'é'.repeat(70_000), '%', "'; drop table orders; --"),
    );
    const hostileValue = fc.oneof(
      hostileString,
      fc.constantFrom(Number.MAX_SAFE_INTEGER, -1, 0.1, 1e308, -0, null, true),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
    );
    const field = fc.constantFrom('partnerSession', 'serviceSession', 'email', 'campaignName', 'affiliateName', 'subAffiliate', 'mid', 'props', 'phone', 'ip', 'amount', 'cascade', 'card', 'address');
    await fc.assert(
      fc.asyncProperty(field, hostileValue, async (name, value) => {
        const answer = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('4000000000000002', { [name]: value }));
        expect(answer.status, `${name}=${JSON.stringify(value)?.slice(0, 80)}`).toBeLessThan(500);
      }),
      { numRuns: 60 },
    );
  });

  it('never answers 500 to hostile status-list queries or 3-D Secure bodies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), async (search, page) => {
        const query = new URLSearchParams({ search, pageNumber: page });
        const list = await fetch(`${app.baseUrl}/api/admin/statuses?${query}`, { headers: tenant.adminHeaders });
        expect(list.status).toBeLessThan(500);
        const completion = await post(app, `/api/${tenant.productId}/3ds`, tenant.apiKey, { threeDSecureId: search, partnerSession: page });
        expect(completion.status).toBeLessThan(500);
      }),
      { numRuns: 40 },
    );
  });
});

describe('HTTP semantics', () => {
  it('answers a known path asked with the wrong method 405 with Allow', async () => {
    const response = await fetch(`${app.baseUrl}/api/${tenant.productId}`, { method: 'GET', headers: { authorization: tenant.apiKey } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    const unknown = await fetch(`${app.baseUrl}/no/such/path`);
    expect(unknown.status).toBe(404);
  });

  it('answers a path with no such route 405 or 404 even when its body is no JSON (the route is wrong first)', async () => {
    const headers = { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' };
    const wrongMethod = await fetch(`${app.baseUrl}/payments/pay_1`, { method: 'DELETE', headers, body: '{"amount":' });
    expect(wrongMethod.status).toBe(405);
    expect(await wrongMethod.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
    const nowhere = await fetch(`${app.baseUrl}/no/such/path`, { method: 'POST', headers, body: '{"amount":' });
    expect(nowhere.status).toBe(404);
    expect(await nowhere.json()).toEqual({ success: false, message: 'No route POST /no/such/path' });
  });

  it('answers a 405 or 404 under /payments in that API’s Stripe-style error shape', async () => {
    const wrongMethod = await fetch(`${app.baseUrl}/payments/pay_1`, { method: 'DELETE', headers: { authorization: `Bearer ${tenant.apiKey}` } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD');
    expect(await wrongMethod.json()).toEqual({ error: { type: 'invalid_request_error', code: 'method_not_allowed', message: expect.stringContaining('DELETE is not allowed') } });
    const noSuchPath = await fetch(`${app.baseUrl}/payments/pay_1/no-such-thing`, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
    expect(noSuchPath.status).toBe(404);
    expect(await noSuchPath.json()).toEqual({ error: { type: 'invalid_request_error', code: 'resource_missing', message: expect.stringContaining('No route') } });
    // Elsewhere the REST shape, as before.
    expect(await (await fetch(`${app.baseUrl}/no/such/path`)).json()).toEqual({ success: false, message: expect.any(String) });
  });

  it('answers what Node\'s HTTP parser refuses in the REST error shape, then closes the connection', async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(app.baseUrl);
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
        let received = '';
        socket.on('data', (chunk) => (received += chunk.toString()));
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
      });
    const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as unknown;
    const control = await raw(`POST /payments HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\u0001b\r\nContent-Length: 2\r\n\r\n{}`);
    expect(control).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(bodyOf(control)).toEqual({ success: false, message: expect.stringContaining('not valid HTTP') });
    const smuggled = await raw(`POST /payments HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
    expect(smuggled).toMatch(/^HTTP\/1\.1 400 /);
    const huge = await raw(`GET /payments?x=${'y'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(huge)).toEqual({ success: false, message: expect.stringContaining('too large') });
  });

  it('answers a 405 or 404 under the e-mail, lead and GraphQL paths in each API’s own error shape', async () => {
    const answer = async (path: string, method: string) => {
      const response = await fetch(`${app.baseUrl}${path}`, { method });
      return { status: response.status, body: await response.json() };
    };
    expect(await answer('/api/email', 'GET')).toEqual({ status: 405, body: { success: false, error: expect.stringContaining('GET is not allowed on /api/email') } });
    expect(await answer('/api/email/nothing', 'POST')).toEqual({ status: 404, body: { success: false, error: expect.stringContaining('No route') } });
    expect(await answer('/api/public/customer-leads', 'PUT')).toEqual({ status: 405, body: { ok: false, error: { code: 'method_not_allowed', message: expect.any(String), details: [] } } });
    expect(await answer('/api/public/customer-leads/x', 'GET')).toEqual({ status: 404, body: { ok: false, error: { code: 'not_found', message: expect.any(String), details: [] } } });
    expect(await answer('/graphql', 'DELETE')).toEqual({ status: 405, body: { errors: [{ message: expect.any(String), extensions: { code: 'METHOD_NOT_ALLOWED' } }] } });
    expect(await answer('/graphql/x', 'GET')).toEqual({ status: 404, body: { errors: [{ message: expect.any(String), extensions: { code: 'NOT_FOUND' } }] } });
  });

  it('answers a body in a content coding (gzip, or one it does not know) 415, reading and charging nothing', async () => {
    const before = await orderCount();
    const send = (encoding: string, body: Uint8Array | string) =>
      fetch(`${app.baseUrl}/api/${tenant.productId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding, authorization: tenant.apiKey }, body });
    const plain = JSON.stringify(submitBody('4242424242424242'));
    for (const [encoding, body] of [['gzip', gzipSync(plain)], ['xyz', plain], ['identity, br', plain]] as const) {
      const response = await send(encoding, body);
      expect(response.status, encoding).toBe(415);
      expect(await response.json()).toEqual({ success: false, message: 'Content-Encoding is not supported: send the body uncompressed' });
    }
    expect(await orderCount()).toBe(before);
    // `identity` is no coding: read as sent. A request without a body has nothing encoded.
    expect((await send('identity', plain)).status).toBe(200);
    const read = await fetch(`${app.baseUrl}/api/admin/statuses?pageSize=1`, { headers: { ...tenant.adminHeaders, 'content-encoding': 'gzip' } });
    expect(read.status).toBe(200);
    // The payments API answers in its own shape.
    const payments = await fetch(`${app.baseUrl}/payments`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: tenant.apiKey }, body: gzipSync('{}') });
    expect(payments.status).toBe(415);
    expect(await payments.json()).toMatchObject({ error: { code: 'unsupported_media_type', message: 'Content-Encoding is not supported: send the body uncompressed' } });
  });

  it('answers a body declared in a charset other than UTF-8 415, reading and charging nothing; utf-8 in any case is read', async () => {
    const before = await orderCount();
    const send = (contentType: string) =>
      fetch(`${app.baseUrl}/api/${tenant.productId}`, { method: 'POST', headers: { 'content-type': contentType, authorization: tenant.apiKey }, body: JSON.stringify(submitBody('4242424242424242')) });
    for (const contentType of ['application/json; charset=iso-8859-1', 'application/json;charset="windows-1252"', 'application/json; charset=']) {
      const response = await send(contentType);
      expect(response.status, contentType).toBe(415);
      expect(await response.json()).toEqual({ success: false, message: 'Content-Type charset must be utf-8: JSON is sent as UTF-8' });
    }
    expect(await orderCount()).toBe(before);
    expect((await send('application/json; charset=UTF-8')).status).toBe(200);
  });

  it('refuses a body that is not UTF-8 as invalid JSON on every route, storing no U+FFFD in its place', async () => {
    const before = await orderCount();
    // `inv\xff@…` and the UTF-8 form of a lone surrogate (ED A0 80): bytes no UTF-8 text holds.
    const plain = JSON.stringify(submitBody('4242424242424242', { email: 'invX@example.com', partnerSession: 'sessY' }));
    const [head, afterX] = plain.split('X') as [string, string];
    const [middle, tail] = afterX.split('Y') as [string, string];
    const body = Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(middle), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(tail)]);
    const sendTo = (path: string, authorization: string) => fetch(`${app.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body });
    const submitted = await sendTo(`/api/${tenant.productId}`, tenant.apiKey);
    expect(submitted.status).toBe(400);
    expect(await submitted.json()).toEqual({ success: false, message: 'Invalid JSON body' });
    const paid = await sendTo('/payments', `Bearer ${tenant.apiKey}`);
    expect(paid.status).toBe(400);
    expect(await paid.json()).toMatchObject({ error: { code: 'invalid_json' } });
    expect(await orderCount()).toBe(before);
    // One byte order mark is skipped, as ever; a second is no JSON.
    const marked = (marks: number) => fetch(`${app.baseUrl}/api/${tenant.productId}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: tenant.apiKey }, body: `${'\uFEFF'.repeat(marks)}${JSON.stringify(submitBody('4000000000000002'))}` });
    expect((await marked(1)).status).toBe(200);
    expect((await marked(2)).status).toBe(400);
    const mailed = await fetch(`${app.baseUrl}/api/email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat([Buffer.from('{"tenant_key":"'), Buffer.from([0xff]), Buffer.from('"}')]) });
    expect(mailed.status).toBe(400);
    expect(await mailed.json()).toEqual({ success: false, error: 'Validation error', details: { body: 'is not valid JSON' } });
  });

  it('refuses a body that gives a field twice in one object on every API, naming the field and never its values, writing nothing', async () => {
    // JSON.parse keeps the last of two; a proxy or firewall in front may have read the first.
    const before = await orderCount();
    const submit = JSON.stringify(submitBody('4242424242424242')).replace('"pan":"4242424242424242"', '"pan":"4000000000000002","pan":"4242424242424242"');
    const submitted = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submit);
    expect(submitted).toMatchObject({ status: 400, body: { success: false, message: 'card.pan is given more than once in its object; give each field once' } });
    // Escapes are read as JSON.parse reads them: "\u0061" is "a".
    const escaped = JSON.stringify(submitBody('4242424242424242', { props: { a: 1 } })).replace('"a":1', '"a":1,"\\u0061":2');
    expect(await post(app, `/api/${tenant.productId}`, tenant.apiKey, escaped)).toMatchObject({ status: 400, body: { message: 'props.a is given more than once in its object; give each field once' } });
    const paid = await fetch(`${app.baseUrl}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
      body: JSON.stringify(paymentBody('4242424242424242', { amount: 100 })).replace('"amount":100', '"amount":100,"amount":100000'),
    });
    expect(paid.status).toBe(400);
    expect(await paid.json()).toEqual({ error: { type: 'invalid_request_error', code: 'parameter_invalid', message: 'amount is given more than once in its object; give each field once', param: 'amount' } });
    expect(await orderCount()).toBe(before);

    const mailed = await fetch(`${app.baseUrl}/api/email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"tenant_key":"a","emails":[{"to":"x@example.com","to":"y@example.com"}]}' });
    expect(mailed.status).toBe(400);
    expect(await mailed.json()).toEqual({ success: false, error: 'Validation error', details: { 'emails[0].to': 'is given more than once in its object; give each field once' } });

    const leads = await createLeadTenant(app);
    const lead = await postLead(app.baseUrl, `{"session_id":"${newSessionId()}","email":"a@example.com","email":"b@example.com"}`, bearer(leads.keys.test.secretKey));
    expect(lead).toMatchObject({ status: 422, body: { ok: false, error: { code: 'validation_failed', details: ['email: is given more than once in its object; give each field once'] } } });
    const stored = await app.orm.em.fork().execute(`select count(*)::int as n from customer_leads where tenant_id = ?`, [leads.id]);
    expect(stored).toEqual([{ n: 0 }]);

    const graphql = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
      body: '{"query":"{ __typename }","query":"{ statuses(pageSize: 1) { totalCount } }"}',
    });
    expect(graphql.status).toBe(400);
    expect(await graphql.json()).toEqual({ errors: [{ message: 'query is given more than once in its object; give each field once', extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('answers a body that is not JSON 415', async () => {
    const response = await fetch(`${app.baseUrl}/api/${tenant.productId}`, { method: 'POST', headers: { 'content-type': 'text/plain', authorization: tenant.apiKey }, body: 'card=4242' });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({ success: false, message: 'Content-Type must be application/json' });
  });
});
