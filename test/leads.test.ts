import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { refuseRows } from './support/refusals.ts';
import { bearer, createLeadTenant, getLeads, graphql, newSessionId, postLead, type LeadTenant } from './support/leads.ts';
import { LEADS_PATH } from '../api/rest/leads.routes.ts';

/** Standard base64 of a value's JSON text (`JSON.stringify` escapes NUL and lone surrogates, so they arrive intact). */
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
/** The JSON text of arrays nested `depth` levels deep (too deep for the recursive `JSON.stringify`). */
const nestedJson = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

let app: TestApp;
let tenant: LeadTenant;
const ORIGIN = 'https://shop.example';

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createLeadTenant(app, { origins: [ORIGIN] });
});
afterAll(async () => {
  await app?.close();
});

const base = () => app.baseUrl;
const secret = () => bearer(tenant.keys.test.secretKey);
const browser = (origin = ORIGIN, key = tenant.keys.test.publishableKey) => ({ 'x-service-lead-key': key, origin });
const base64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

async function leadRows(sessionId: string) {
  return app.orm.em.fork().getConnection().execute(`select * from customer_leads where session_id = ?`, [sessionId]);
}

describe('writing a lead', () => {
  it('creates with 201, updates the same session with 200, and reads back the complete record', async () => {
    const sessionId = newSessionId();
    const created = await postLead(base(), { email: 'ann@example.com', session_id: sessionId, first_name: 'Ann', scans: [{ page: '/cart' }], cfa_device: 'iPhone' }, secret());
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ ok: true, data: { id: expect.any(String), session_id: sessionId, status: 'lead', created_at: expect.any(String), updated_at: expect.any(String) } });

    const updated = await postLead(
      base(),
      { email: 'ann@example.org', session_id: sessionId, scans: [{ page: '/cart' }, { page: '/pay' }], pending_data_b64: base64({ plan: 'gold', seats: 2 }), d2d_rep: 'R-7' },
      secret(),
    );
    expect(updated.status).toBe(200);
    expect(updated.body.data.id).toBe(created.body.data.id);

    const read = await getLeads(base(), { session_id: sessionId }, secret());
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      ok: true,
      data: [
        {
          id: created.body.data.id,
          session_id: sessionId,
          email: 'ann@example.org',
          first_name: 'Ann',
          last_name: null,
          phone: null,
          scans: [{ page: '/cart' }, { page: '/pay' }],
          pending_data: { plan: 'gold', seats: 2 },
          cfa_device: 'iPhone',
          d2d_rep: 'R-7',
          status: 'lead',
          application_id: expect.any(Number),
          environment: 'test',
          transaction_id: null,
          order_id: null,
          amount: null,
          currency: null,
          subscription_id: null,
          paid_at: null,
          created_at: created.body.data.created_at,
          updated_at: updated.body.data.updated_at,
        },
      ],
    });
    expect(read.body.data[0]).not.toHaveProperty('tenant_id');
  });

  it('answers cfa_device as null on a lead that never wrote it, as every optional field of spec 2.4', async () => {
    const sessionId = newSessionId();
    expect((await postLead(base(), { email: 'dee@example.com', session_id: sessionId }, secret())).status).toBe(201);
    const read = await getLeads(base(), { session_id: sessionId }, secret());
    expect(read.body.data).toEqual([expect.objectContaining({ email: 'dee@example.com', first_name: null, phone: null, pending_data: null, cfa_device: null })]);
    // GraphQL answers the same record.
    const viaGraphQL = await graphql(base(), tenant.apiKey, `query($s: String) { customerLeads(sessionId: $s) { edges { node { trackingFields } } } }`, { s: sessionId });
    expect(viaGraphQL.data.customerLeads.edges).toEqual([{ node: { trackingFields: { cfa_device: null } } }]);
  });

  it('names every invalid field in one 422, and refuses the fields only the gateway sets', async () => {
    const sessionId = newSessionId();
    const refused = await postLead(
      base(),
      {
        email: 'x'.repeat(321),
        session_id: sessionId,
        scans: [{ page: '/a' }, { title: 'no page' }],
        pending_data_b64: base64('a string, not an object'),
        tenant_id: 1,
        status: 'paid',
        amount: '1.00',
        transaction_id: 'tx',
        cfa_device: 7,
        nickname: 'x',
      },
      secret(),
    );
    expect(refused.status).toBe(422);
    expect(refused.body.ok).toBe(false);
    expect(refused.body.error!.code).toBe('validation_failed');
    const fields = refused.body.error!.details.map((detail) => detail.split(':')[0]);
    expect(fields.sort()).toEqual(['amount', 'cfa_device', 'email', 'nickname', 'pending_data_b64', 'scans[1].page', 'status', 'tenant_id', 'transaction_id']);
    expect(await leadRows(sessionId)).toEqual([]);
  });

  it.each([
    ['an empty session_id', { email: 'a@example.com', session_id: '' }, 'session_id'],
    ['a session_id over 255 characters', { email: 'a@example.com', session_id: 's'.repeat(256) }, 'session_id'],
    ['no e-mail', { session_id: 's1' }, 'email'],
    // Spaces alone name no customer and no session.
    ['an e-mail of spaces alone', { email: ' \u00a0 ', session_id: 's1' }, 'email'],
    ['a session_id of spaces alone', { email: 'a@example.com', session_id: '   ' }, 'session_id'],
    ['pending data that is not base64', { email: 'a@example.com', session_id: 's1', pending_data_b64: 'not base64!' }, 'pending_data_b64'],
    ['pending data that is base64 of broken JSON', { email: 'a@example.com', session_id: 's1', pending_data_b64: Buffer.from('{"a":').toString('base64') }, 'pending_data_b64'],
    ['scans that are not an array', { email: 'a@example.com', session_id: 's1', scans: { page: '/' } }, 'scans'],
    ['a NUL byte in a name', { email: 'a@example.com', session_id: 's1', first_name: 'Ada\u0000' }, 'first_name'],
    ['a card number typed into a name', { email: 'a@example.com', session_id: 's1', last_name: 'Silva 4242 4242 4242 4242' }, 'last_name'],
    ['a card number typed into the phone', { email: 'a@example.com', session_id: 's1', phone: '4111-1111-1111-1111' }, 'phone'],
    // The lead shows its e-mail as written, and the customer_lead.paid webhook sends it.
    ['a card number typed as the e-mail', { email: '4000 0566 5566 5556', session_id: 's1' }, 'email'],
    ['a card number with tabs typed as the e-mail', { email: '4000\t0566\t5566\t5556', session_id: 's1' }, 'email'],
    // However white space splits its groups: tabs, two spaces, no-break or zero-width spaces; in fullwidth digits too.
    ['a card number split by tabs', { email: 'a@example.com', session_id: 's1', first_name: '4000\t0566\t5566\t5556' }, 'first_name'],
    ['a card number split by two spaces', { email: 'a@example.com', session_id: 's1', last_name: '4000  0566  5566  5556' }, 'last_name'],
    ['a card number split by no-break spaces', { email: 'a@example.com', session_id: 's1', last_name: '4000\u00a00566\u00a05566\u00a05556' }, 'last_name'],
    ['a card number split by zero-width spaces', { email: 'a@example.com', session_id: 's1', first_name: '4000\u200b0566\u200b5566\u200b5556' }, 'first_name'],
    ['a card number in fullwidth digits', { email: 'a@example.com', session_id: 's1', first_name: '４００００５６６５５６６５５５６' }, 'first_name'],
    ['an unpaired surrogate in a CFA field', { email: 'a@example.com', session_id: 's1', cfa_device: 'x\ud800' }, 'cfa_device'],
    ['a NUL byte inside the pending data', { email: 'a@example.com', session_id: 's1', pending_data_b64: b64({ a: 'x\u0000y' }) }, 'pending_data_b64.a'],
    ['an unpaired surrogate inside the pending data', { email: 'a@example.com', session_id: 's1', pending_data_b64: b64({ a: '\ud800' }) }, 'pending_data_b64.a'],
    // Read as its last by the gateway, maybe as its first by whatever reads the pending data back.
    ['a field given twice in the pending data', { email: 'a@example.com', session_id: 's1', pending_data_b64: Buffer.from('{"plan":{"seats":1,"seats":200}}').toString('base64') }, 'pending_data_b64.plan.seats'],
    ['a NUL byte in a field name of the pending data', { email: 'a@example.com', session_id: 's1', pending_data_b64: b64({ 'a\u0000': 1 }) }, 'a field name in pending_data_b64'],
    [
      'pending data nested 5,000 levels deep',
      { email: 'a@example.com', session_id: 's1', pending_data_b64: Buffer.from(`{"a":${nestedJson(5_000)}}`).toString('base64') },
      'pending_data_b64',
    ],
    ['a scan nested 20,000 levels deep', `{"email":"a@example.com","session_id":"s1","scans":[{"page":"/x","n":${nestedJson(20_000)}}]}`, 'scans[0]'],
    // Parsed, it would be another number (…67000), kept and answered changed.
    ['a scan integer beyond 2^53', '{"email":"a@example.com","session_id":"s1","scans":[{"page":"/x","n":12345678901234567890}]}', 'scans[0].n'],
    // An update keeps a field left out: a null that looks like clearing it is refused, never taken silently.
    ['a null name', { email: 'a@example.com', session_id: 's1', first_name: null }, 'first_name'],
    ['a null phone', { email: 'a@example.com', session_id: 's1', phone: null }, 'phone'],
    ['null pending data', { email: 'a@example.com', session_id: 's1', pending_data_b64: null }, 'pending_data_b64'],
    ['a field named __proto__', '{"email":"a@example.com","session_id":"s1","__proto__":{"status":"paid"}}', '__proto__'],
    ['a byte order mark, then a field named __proto__', '\uFEFF{"email":"a@example.com","session_id":"s1","__proto__":{}}', '__proto__'],
    ['a field named __proto__ inside a scan', '{"email":"a@example.com","session_id":"s1","scans":[{"page":"/","__proto__":{}}]}', '__proto__'],
    ['a session_id of 256 emoji', { email: 'a@example.com', session_id: '😀'.repeat(256) }, 'session_id'],
    ['a pending-data integer beyond 2^53', { email: 'a@example.com', session_id: 's1', pending_data_b64: Buffer.from('{"order":{"ref":12345678901234567890}}').toString('base64') }, 'pending_data_b64.order.ref'],
  ])('refuses %s with 422 naming it', async (_name, body, field) => {
    const refused = await postLead(base(), body, secret());
    expect(refused.status).toBe(422);
    expect(refused.body.error!.details).toEqual([expect.stringMatching(new RegExp(`^${field.replace(/[[\]]/g, '\\$&')}: `))]);
  });

  it('counts characters as the spec and the columns do: a session_id of 255, mostly emoji, and a name of 200 are kept, and read back by filter', async () => {
    const sessionId = `${'😀'.repeat(247)}${randomUUID().slice(0, 8)}`;
    const kept = await postLead(base(), { email: `${'é'.repeat(100)}@example.com`, session_id: sessionId, first_name: '𝒜'.repeat(200) }, secret());
    expect(kept.status).toBe(201);
    const read = await getLeads(base(), { session_id: sessionId }, secret());
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual([expect.objectContaining({ session_id: sessionId, first_name: '𝒜'.repeat(200) })]);
  });

  it('keeps a phone of 15 digits though they pass Luhn: a phone number is that long, and only a longer run is a card', async () => {
    const sessionId = newSessionId();
    const kept = await postLead(base(), { email: 'a@example.com', session_id: sessionId, phone: '+378282246310005' }, secret());
    expect(kept.status).toBe(201);
    expect((await leadRows(sessionId))[0]).toMatchObject({ phone: '+378282246310005' });
  });

  it('answers a list of scans too long with one problem, not one per item: the answer stays smaller than the request', async () => {
    const body = `{"email":"a@example.com","session_id":"${newSessionId()}","scans":[${Array(120_000).fill('1').join(',')}]}`;
    const refused = await postLead(base(), body, browser());
    expect(refused.status).toBe(422);
    expect(refused.body.error!.details).toEqual(['scans: at most 500 items']);
  });

  it('tells at most 50 problems, then how many more', async () => {
    const body = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`nickname${i}`, 'x']));
    const refused = await postLead(base(), { email: 'a@example.com', session_id: newSessionId(), ...body }, secret());
    expect(refused.status).toBe(422);
    expect(refused.body.error!.details).toHaveLength(51);
    expect(refused.body.error!.details.at(-1)).toBe('… and 30 more');
  });

  it('answers 400 invalid_json to a body that is not JSON', async () => {
    const refused = await postLead(base(), '{"email": ', secret());
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ ok: false, error: { code: 'invalid_json', message: expect.any(String), details: [] } });
  });

  it('answers 401 without a key or with an unknown or wrongly placed key, before reading the body', async () => {
    const body = { email: 'a@example.com', session_id: newSessionId() };
    for (const headers of [{}, bearer('sk_test_unknownunknownunknown'), bearer(tenant.keys.test.publishableKey), browser(ORIGIN, tenant.keys.test.secretKey)]) {
      const refused = await postLead(base(), body, headers);
      expect(refused.status).toBe(401);
      expect(refused.body.error!.code).toBe('unauthorized');
    }
    expect((await postLead(base(), '{not json', {})).status).toBe(401);
    expect(await leadRows(body.session_id)).toEqual([]);
  });

  it('takes a browser write only from an allowed origin, exactly', async () => {
    const sessionId = newSessionId();
    for (const origin of ['https://evil.example', 'https://shop.example:443', 'http://shop.example', 'https://shop.example.evil.example']) {
      const refused = await postLead(base(), { email: 'a@example.com', session_id: sessionId }, browser(origin));
      expect(refused.status).toBe(403);
      expect(refused.body.error!.code).toBe('forbidden');
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    }
    const noOrigin = await postLead(base(), { email: 'a@example.com', session_id: sessionId }, { 'x-service-lead-key': tenant.keys.test.publishableKey });
    expect(noOrigin.status).toBe(403);
    expect(await leadRows(sessionId)).toEqual([]);

    const accepted = await postLead(base(), { email: 'a@example.com', session_id: sessionId }, browser());
    expect(accepted.status).toBe(201);
    expect(accepted.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(accepted.headers.get('vary')).toMatch(/Origin/);
  });

  it('answers the CORS preflight for allowed origins only, never with a wildcard', async () => {
    const preflight = (origin: string) =>
      fetch(`${base()}/api/public/customer-leads`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-service-lead-key' },
      });
    const allowed = await preflight(ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/x-service-lead-key/);
    expect(allowed.headers.get('vary')).toMatch(/Origin/);
    const refused = await preflight('https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('keeps one lead per session when many writes of it arrive at once', async () => {
    const sessionId = newSessionId();
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) => postLead(base(), { email: 'race@example.com', session_id: sessionId, scans: [{ page: `/p${i}` }] }, secret())),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(24);
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(await leadRows(sessionId)).toHaveLength(1);
  });

  it('holds at most 50 CFA/D2D fields over all its writes, however many arrive at once; their values may still change', async () => {
    const sessionId = newSessionId();
    const fields = (batch: number, count = 20) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`cfa_b${batch}_${index}`, 'x']));
    // Five writes of 20 new names each at once: two fit (40 names), the others would pass 50.
    const writes = await Promise.all([0, 1, 2, 3, 4].map((batch) => postLead(base(), { email: 'ann@example.com', session_id: sessionId, ...fields(batch) }, secret())));
    expect(writes.map((write) => write.status).sort()).toEqual([200, 201, 422, 422, 422]);
    expect(writes.find((write) => write.status === 422)!.body).toEqual({
      ok: false,
      error: { code: 'validation_failed', message: 'The request has invalid fields', details: ['cfa_*/d2d_*: a lead holds at most 50 fields, this write would add more'] },
    });
    const [stored] = await leadRows(sessionId);
    expect(Object.keys(stored!.tracking_fields)).toHaveLength(40);

    // Ten more fit, the eleventh does not; a stored field's value still changes.
    expect((await postLead(base(), { email: 'ann@example.com', session_id: sessionId, ...fields(9, 10) }, secret())).status).toBe(200);
    expect((await postLead(base(), { email: 'ann@example.com', session_id: sessionId, cfa_one_more: 'x' }, secret())).status).toBe(422);
    const [name] = Object.keys(stored!.tracking_fields);
    expect((await postLead(base(), { email: 'ann@example.com', session_id: sessionId, [name!]: 'changed' }, secret())).status).toBe(200);
    const [after] = await leadRows(sessionId);
    expect(Object.keys(after!.tracking_fields)).toHaveLength(50);
    expect(after!.tracking_fields[name!]).toBe('changed');
  });

  it('never lets a lead written with one environment or application be changed with another key', async () => {
    const sessionId = newSessionId();
    expect((await postLead(base(), { email: 'a@example.com', session_id: sessionId }, secret())).status).toBe(201);
    const live = await postLead(base(), { email: 'b@example.com', session_id: sessionId }, bearer(tenant.keys.live.secretKey));
    expect(live.status).toBe(403);
    const [row] = await leadRows(sessionId);
    expect(row).toMatchObject({ email: 'a@example.com', environment: 'test' });
  });
});

describe('reading leads', () => {
  it('needs the secret key: a publishable key is 403, no key 401', async () => {
    expect((await getLeads(base(), {}, browser())).status).toBe(403);
    expect((await getLeads(base(), {}, { 'x-service-lead-key': tenant.keys.test.publishableKey })).body.error!.code).toBe('forbidden');
    expect((await getLeads(base(), {}, {})).status).toBe(401);
  });

  it('answers a publishable key sent as the bearer 403 too, and an unknown one 401', async () => {
    const asBearer = await getLeads(base(), {}, bearer(tenant.keys.test.publishableKey));
    expect(asBearer.status).toBe(403);
    expect(asBearer.body.error!.code).toBe('forbidden');
    expect((await getLeads(base(), {}, bearer(`pk_test_${'x'.repeat(40)}`))).status).toBe(401);
  });

  it('refuses a query parameter on a write (it takes none) 400, writing nothing', async () => {
    const sessionId = newSessionId();
    const response = await fetch(`${base()}${LEADS_PATH}?session_id=${sessionId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...secret() },
      body: JSON.stringify({ email: 'query@example.com', session_id: sessionId }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ ok: false, error: { code: 'validation_failed', message: 'The query has invalid parameters', details: ['session_id: unknown query parameter'] } });
    expect(await leadRows(sessionId)).toEqual([]);
  });

  it('answers a filter named like a property every object has (constructor, toString, __proto__) 400, as any unknown one', async () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']) {
      const refused = await getLeads(base(), { [name]: 'x' }, secret());
      expect(refused.status, name).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'validation_failed', details: [`${name}: unknown query parameter`] });
    }
  });

  it('answers a NUL byte in the query string 400 naming the parameter, and 401 first when the key is missing', async () => {
    const refused = await getLeads(base(), { email: 'a\u0000b' }, secret());
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'validation_failed', details: ['email: must not contain NUL bytes or unpaired surrogates'] });
    expect((await getLeads(base(), { email: 'a\u0000b' }, {})).status).toBe(401);
  });

  it('answers a query escape that is no UTF-8 400 naming the parameter, never reading it as another session', async () => {
    for (const escape of ['%ED%A0%80', '%FF']) {
      const refused = await fetch(`${base()}/api/public/customer-leads?session_id=${escape}`, { headers: secret() });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ ok: false, error: { code: 'validation_failed', details: [expect.stringMatching(/^session_id: must be percent-encoded UTF-8 \(/)] } });
    }
  });

  it('combines filters with AND, newest update first, with limit 1 to 100', async () => {
    const reader = await createLeadTenant(app);
    const key = bearer(reader.keys.live.secretKey);
    const sessions: string[] = [newSessionId(), newSessionId(), newSessionId()];
    for (const [i, sessionId] of sessions.entries()) {
      expect((await postLead(base(), { email: i < 2 ? 'same@example.com' : 'other@example.com', session_id: sessionId }, key)).status).toBe(201);
    }
    // Touching the first makes it the most recently updated.
    expect((await postLead(base(), { email: 'same@example.com', session_id: sessions[0]! }, key)).status).toBe(200);

    const all = await getLeads(base(), {}, key);
    expect(all.body.data.map((lead: { session_id: string }) => lead.session_id)).toEqual([sessions[0], sessions[2], sessions[1]]);
    const same = await getLeads(base(), { email: 'same@example.com' }, key);
    expect(same.body.data.map((lead: { session_id: string }) => lead.session_id)).toEqual([sessions[0], sessions[1]]);
    // An e-mail matches whatever its case, as payments report it (lower-cased); the lead keeps it as written.
    expect((await getLeads(base(), { email: 'Same@EXAMPLE.com' }, key)).body.data.map((lead: { session_id: string }) => lead.session_id)).toEqual([sessions[0], sessions[1]]);
    const both = await getLeads(base(), { email: 'same@example.com', session_id: sessions[1]!, status: 'lead' }, key);
    expect(both.body.data.map((lead: { session_id: string }) => lead.session_id)).toEqual([sessions[1]]);
    expect((await getLeads(base(), { email: 'same@example.com', status: 'paid' }, key)).body.data).toEqual([]);
    expect((await getLeads(base(), { id: same.body.data[1].id }, key)).body.data).toHaveLength(1);
    expect((await getLeads(base(), { limit: '1' }, key)).body.data).toHaveLength(1);

    const badQueries: Record<string, string>[] = [{ limit: '0' }, { limit: '101' }, { limit: 'ten' }, { status: 'gone' }, { id: 'not-a-uuid' }, { colour: 'red' }];
    for (const query of badQueries) {
      const refused = await getLeads(base(), query, key);
      expect(refused.status, JSON.stringify(query)).toBe(400);
      expect(refused.body.error!.code).toBe('validation_failed');
      expect(refused.body.error!.details[0]).toMatch(new RegExp(`^${Object.keys(query)[0]}: `));
    }
    // A refused choice lists the choices, worded as every other API of the gateway words it.
    expect((await getLeads(base(), { status: 'gone' }, key)).body.error!.details).toEqual(['status: must be one of: lead, paid']);
  });

  it("never shows or changes another tenant's leads", async () => {
    const other = await createLeadTenant(app, { origins: [ORIGIN] });
    const sessionId = newSessionId();
    const mine = await postLead(base(), { email: 'mine@example.com', session_id: sessionId }, secret());
    expect(mine.status).toBe(201);

    expect((await getLeads(base(), { session_id: sessionId }, bearer(other.keys.test.secretKey))).body.data).toEqual([]);
    expect((await getLeads(base(), { id: mine.body.data.id }, bearer(other.keys.test.secretKey))).body.data).toEqual([]);
    // The same session id under the other tenant is the other tenant's own lead.
    const theirs = await postLead(base(), { email: 'theirs@example.com', session_id: sessionId }, browser(ORIGIN, other.keys.test.publishableKey));
    expect(theirs.status).toBe(201);
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
    const read = await getLeads(base(), { session_id: sessionId }, secret());
    expect(read.body.data).toEqual([expect.objectContaining({ id: mine.body.data.id, email: 'mine@example.com' })]);
  });

  it("reads with a test key the test leads only, with a live key the live ones: a test key never shows a live customer", async () => {
    const shop = await createLeadTenant(app, { origins: [ORIGIN] });
    const [testSession, liveSession] = [newSessionId(), newSessionId()];
    const testLead = await postLead(base(), { email: 'tester@example.com', session_id: testSession }, bearer(shop.keys.test.secretKey));
    const liveLead = await postLead(base(), { email: 'customer@example.com', session_id: liveSession }, browser(ORIGIN, shop.keys.live.publishableKey));
    expect([testLead.status, liveLead.status]).toEqual([201, 201]);

    const sessions = async (key: string, query: Record<string, string> = {}) =>
      (await getLeads(base(), query, bearer(key))).body.data.map((lead: { session_id: string; environment: string }) => [lead.session_id, lead.environment]);
    expect(await sessions(shop.keys.test.secretKey)).toEqual([[testSession, 'test']]);
    expect(await sessions(shop.keys.live.secretKey)).toEqual([[liveSession, 'live']]);
    // Not by naming it either.
    expect(await sessions(shop.keys.test.secretKey, { session_id: liveSession })).toEqual([]);
    expect(await sessions(shop.keys.test.secretKey, { id: liveLead.body.data.id })).toEqual([]);
    expect(await sessions(shop.keys.test.secretKey, { email: 'customer@example.com' })).toEqual([]);
  });
});

describe('lead keys', () => {
  it('are generated by the operator; regenerating turns both old keys away on the very next request', async () => {
    const keyed = await createLeadTenant(app, { origins: [ORIGIN] });
    const operator = app.config.operatorToken!;
    const generate = `mutation($tenantId: Int!) { generateLeadKeys(tenantId: $tenantId, application: "shop", environment: "live") { applicationId environment publishableKey secretKey } }`;
    const first = await graphql(base(), operator, generate, { tenantId: keyed.id });
    expect(first.errors).toBeUndefined();
    const keys = first.data.generateLeadKeys;
    expect(keys).toMatchObject({ environment: 'live', publishableKey: expect.stringMatching(/^pk_live_/), secretKey: expect.stringMatching(/^sk_live_/) });
    expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, bearer(keys.secretKey))).status).toBe(201);

    const second = (await graphql(base(), operator, generate, { tenantId: keyed.id })).data.generateLeadKeys;
    expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, bearer(keys.secretKey))).status).toBe(401);
    expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, browser(ORIGIN, keys.publishableKey))).status).toBe(401);
    expect((await getLeads(base(), {}, bearer(keys.secretKey))).status).toBe(401);
    expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, bearer(second.secretKey))).status).toBe(201);
    expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, browser(ORIGIN, second.publishableKey))).status).toBe(201);

    // Only hashes are stored.
    const dump = JSON.stringify(await app.orm.em.fork().getConnection().execute(`select * from lead_key_sets where tenant_id = ?`, [keyed.id]));
    for (const key of [keys.publishableKey, keys.secretKey, second.publishableKey, second.secretKey]) expect(dump).not.toContain(key);
    // Each replacement is audited as the operator's, naming the application and environment, never a key.
    const audited = await app.orm.em.fork().execute<{ actor: string; changes: unknown }[]>(`select actor, changes from audit_entries where tenant_id = ? and action = 'lead_keys.replaced' and actor <> 'test' order by id`, [keyed.id]);
    expect(audited).toEqual([1, 2].map(() => ({ actor: 'operator:graphql', changes: { application: 'shop', environment: 'live' } })));
    expect(JSON.stringify(audited)).not.toMatch(/[ps]k_live_/);
  });

  it('are generated only with the operator token, and allowed origins are set the same way', async () => {
    const keyed = await createLeadTenant(app);
    const generate = `mutation { generateLeadKeys(tenantId: ${keyed.id}, application: "shop", environment: "test") { secretKey } }`;
    const refused = await graphql(base(), keyed.apiKey, generate);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const newOrigin = 'http://127.0.0.1:9999';
    const set = await graphql(base(), app.config.operatorToken!, `mutation($o: [String!]!) { setLeadAllowedOrigins(tenantId: ${keyed.id}, application: "shop", origins: $o) { slug allowedOrigins } }`, {
      o: [newOrigin],
    });
    expect(set.data.setLeadAllowedOrigins).toEqual({ slug: 'shop', allowedOrigins: [newOrigin] });
    expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, browser(newOrigin, keyed.keys.test.publishableKey))).status).toBe(201);
    const bad = await graphql(base(), app.config.operatorToken!, `mutation { setLeadAllowedOrigins(tenantId: ${keyed.id}, application: "shop", origins: ["https://x.example/"]) { slug } }`);
    expect(bad.errors?.[0]?.message).toMatch(/origins\[0\]/);
    const withCredentials = await graphql(base(), app.config.operatorToken!, `mutation { setLeadAllowedOrigins(tenantId: ${keyed.id}, application: "shop", origins: ["https://user@x.example"]) { slug } }`);
    expect(withCredentials.errors?.[0]?.message).toMatch(/origins\[0\]/);

    // Written with capitals or a default port, an origin is kept as browsers send it, so their writes match it.
    const written = await graphql(base(), app.config.operatorToken!, `mutation($o: [String!]!) { setLeadAllowedOrigins(tenantId: ${keyed.id}, application: "shop", origins: $o) { allowedOrigins } }`, {
      o: ['HTTP://Shop.Example:80', 'https://shop.example:443', 'https://shop.example'],
    });
    expect(written.data.setLeadAllowedOrigins).toEqual({ allowedOrigins: ['http://shop.example', 'https://shop.example'] });
    // Each change of who may write is audited with the list it set; a refused one leaves nothing.
    const audited = await app.orm.em.fork().execute<{ actor: string; changes: unknown }[]>(`select actor, changes from audit_entries where tenant_id = ? and action = 'lead_origins.replaced' order by id`, [keyed.id]);
    expect(audited).toEqual([
      { actor: 'operator:graphql', changes: { origins: [newOrigin] } },
      { actor: 'operator:graphql', changes: { origins: ['http://shop.example', 'https://shop.example'] } },
    ]);
    expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, browser('https://shop.example', keyed.keys.test.publishableKey))).status).toBe(201);
  });
});

describe('lead keys and allowed origins: audited in the same transaction', () => {
  const refuse = (table: string, event: 'insert' | 'update at commit', when: string) => refuseRows(app.orm, table, event, when);
  const entriesOf = async (tenantId: number, action: string) =>
    (await app.orm.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from audit_entries where tenant_id = ? and action = ?`, [tenantId, action]))[0]!.n;

  it('replaces no key pair whose audit entry PostgreSQL refuses, and keeps no entry of a replacement refused at its commit', async () => {
    const keyed = await createLeadTenant(app, { origins: [ORIGIN] });
    const generate = `mutation($tenantId: Int!) { generateLeadKeys(tenantId: $tenantId, application: "shop", environment: "test") { secretKey } }`;
    const entries = await entriesOf(keyed.id, 'lead_keys.replaced');
    const refusals = [
      ['audit_entries', 'insert', `new.tenant_id = ${keyed.id} and new.action = 'lead_keys.replaced'`],
      ['lead_key_sets', 'update at commit', `new.tenant_id = ${keyed.id}`],
    ] as const;
    for (const [table, event, when] of refusals) {
      const allow = await refuse(table, event, when);
      try {
        const answer = await graphql(base(), app.config.operatorToken!, generate, { tenantId: keyed.id });
        expect(answer.data?.generateLeadKeys ?? null).toBeNull();
        expect(answer.errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
      } finally {
        await allow();
      }
      // Nothing was replaced: the pair the application has still writes, and the audit tells of no replacement.
      expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, bearer(keyed.keys.test.secretKey))).status).toBe(201);
      expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, browser(ORIGIN, keyed.keys.test.publishableKey))).status).toBe(201);
      expect(await entriesOf(keyed.id, 'lead_keys.replaced')).toBe(entries);
    }
  });

  it('changes no allowed origins whose audit entry PostgreSQL refuses, and keeps no entry of a change refused at its commit', async () => {
    const keyed = await createLeadTenant(app, { origins: [ORIGIN] });
    const other = 'https://other-shop.example';
    const set = `mutation($tenantId: Int!, $o: [String!]!) { setLeadAllowedOrigins(tenantId: $tenantId, application: "shop", origins: $o) { allowedOrigins } }`;
    const entries = await entriesOf(keyed.id, 'lead_origins.replaced');
    const refusals = [
      ['audit_entries', 'insert', `new.tenant_id = ${keyed.id} and new.action = 'lead_origins.replaced'`],
      ['applications', 'update at commit', `new.tenant_id = ${keyed.id}`],
    ] as const;
    for (const [table, event, when] of refusals) {
      const allow = await refuse(table, event, when);
      try {
        const answer = await graphql(base(), app.config.operatorToken!, set, { tenantId: keyed.id, o: [other] });
        expect(answer.data?.setLeadAllowedOrigins ?? null).toBeNull();
        expect(answer.errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
      } finally {
        await allow();
      }
      // Who may write is unchanged: the old origin still writes, the new one is still refused, and no entry says otherwise.
      expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, browser(ORIGIN, keyed.keys.test.publishableKey))).status).toBe(201);
      expect((await postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, browser(other, keyed.keys.test.publishableKey))).status).toBe(403);
      expect(await entriesOf(keyed.id, 'lead_origins.replaced')).toBe(entries);
    }
  });
});

describe('rate limit', () => {
  it("answers 429 rate_limited with Retry-After once a key's requests per minute are spent", async () => {
    const limited = await createLeadTenant(app, { extra: { rateLimitPerMinute: 3 } });
    const key = bearer(limited.keys.test.secretKey);
    for (let i = 0; i < 3; i++) expect((await getLeads(base(), {}, key)).status).toBe(200);
    const refused = await getLeads(base(), {}, key);
    expect(refused.status).toBe(429);
    expect(refused.body.error!.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it("lets a browser's page read its refusals: 429 with Retry-After, an unknown key, an origin of another application", async () => {
    const origin = `https://rate-${randomUUID().slice(0, 8)}.example`;
    const limited = await createLeadTenant(app, { origins: [origin], extra: { rateLimitPerMinute: 2 } });
    const write = (headers: Record<string, string>) => postLead(base(), { email: 'a@example.com', session_id: newSessionId() }, headers);
    const readable = (answer: { headers: Headers }) => ({
      allowOrigin: answer.headers.get('access-control-allow-origin'),
      expose: answer.headers.get('access-control-expose-headers'),
    });
    for (let i = 0; i < 2; i++) expect(readable(await write(browser(origin, limited.keys.test.publishableKey)))).toEqual({ allowOrigin: origin, expose: 'Retry-After' });

    const refused = await write(browser(origin, limited.keys.test.publishableKey));
    expect(refused.status).toBe(429);
    expect(refused.body.error!.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(readable(refused)).toEqual({ allowOrigin: origin, expose: 'Retry-After' });

    const unknown = await write(browser(origin, `pk_test_${'0'.repeat(32)}`));
    expect(unknown.status).toBe(401);
    expect(readable(unknown).allowOrigin).toBe(origin);
    // A key whose application does not allow this origin (another one does): 403, readable, as the preflight let it through.
    const otherKey = await write(browser(origin, tenant.keys.test.publishableKey));
    expect(otherKey.status).toBe(403);
    expect(readable(otherKey).allowOrigin).toBe(origin);
    // An origin no application allows learns nothing through CORS.
    const stranger = await write(browser('https://stranger.example', `pk_test_${'0'.repeat(32)}`));
    expect(stranger.status).toBe(401);
    expect(readable(stranger)).toEqual({ allowOrigin: null, expose: null });
  });

  it('counts browser writes per shopper behind the proxies TRUSTED_PROXIES names, and never reads X-Forwarded-For otherwise', async () => {
    const origin = `https://proxied-${randomUUID().slice(0, 8)}.example`;
    const writesFrom = async (gateway: TestApp, limited: Awaited<ReturnType<typeof createLeadTenant>>, shoppers: string[]) => {
      const statuses: number[] = [];
      for (const shopper of shoppers) {
        const headers = { ...browser(origin, limited.keys.test.publishableKey), 'x-forwarded-for': shopper };
        statuses.push((await postLead(gateway.baseUrl, { email: 'a@example.com', session_id: newSessionId() }, headers)).status);
      }
      return statuses;
    };
    const shoppers = ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.1', '203.0.113.1'];

    // Not trusted (the default): the header is anyone's to send, so every write counts against the connection's address.
    const direct = await createLeadTenant(app, { origins: [origin], extra: { rateLimitPerMinute: 2 } });
    expect(await writesFrom(app, direct, shoppers)).toEqual([201, 201, 429, 429, 429]);

    // Behind a trusted load balancer (this test's own address): each shopper has a limit of their own.
    const behindProxy = await startTestApp({ TRUSTED_PROXIES: '127.0.0.1, ::1' });
    try {
      const proxied = await createLeadTenant(behindProxy, { origins: [origin], extra: { rateLimitPerMinute: 2 } });
      expect(await writesFrom(behindProxy, proxied, shoppers)).toEqual([201, 201, 201, 201, 429]);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('GraphQL customerLeads', () => {
  it('pages through the same filters with cursors, for the tenant of the API key only', async () => {
    const paged = await createLeadTenant(app);
    const key = bearer(paged.keys.test.secretKey);
    const sessions: string[] = [];
    for (let i = 0; i < 5; i++) {
      const sessionId = newSessionId();
      sessions.unshift(sessionId);
      expect((await postLead(base(), { email: i % 2 === 0 ? 'even@example.com' : 'odd@example.com', session_id: sessionId }, key)).status).toBe(201);
    }
    const query = `query($after: String, $email: String) { customerLeads(first: 2, after: $after, email: $email) { edges { cursor node { sessionId email status environment } } pageInfo { hasNextPage endCursor } } }`;
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await graphql(base(), paged.apiKey, query, { after });
      expect(page.errors).toBeUndefined();
      seen.push(...page.data.customerLeads.edges.map((edge: { node: { sessionId: string } }) => edge.node.sessionId));
      if (!page.data.customerLeads.pageInfo.hasNextPage) break;
      after = page.data.customerLeads.pageInfo.endCursor;
    }
    expect(seen).toEqual(sessions);
    const even = await graphql(base(), paged.apiKey, query, { email: 'even@example.com' });
    expect(even.data.customerLeads.edges).toHaveLength(2);
    expect(even.data.customerLeads.pageInfo.hasNextPage).toBe(true);

    // Another tenant's API key sees none of them.
    const other = await graphql(base(), tenant.apiKey, `query($s: String) { customerLeads(sessionId: $s) { edges { node { id } } } }`, { s: sessions[0] });
    expect(other.data.customerLeads.edges).toEqual([]);
    const refused = await graphql(base(), paged.apiKey, `query { customerLeads(first: 101) { edges { cursor } } }`);
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    // Bad filters are named as this API names its arguments, and a choice as every API words one.
    const badSession = await graphql(base(), paged.apiKey, `query { customerLeads(sessionId: "") { edges { cursor } } }`);
    expect(badSession.errors?.[0]).toMatchObject({ message: expect.stringMatching(/^sessionId: /), extensions: { code: 'BAD_USER_INPUT', field: 'sessionId' } });
    const badStatus = await graphql(base(), paged.apiKey, `query { customerLeads(status: "gone") { edges { cursor } } }`);
    expect(badStatus.errors?.[0]?.message).toContain('status must be one of: lead, paid');
    // A forged cursor whose date PostgreSQL would not take is bad input too, not an internal error.
    for (const updatedAt of ['2024-13-45 99:99:99+00', '0000-01-01 00:00:00+00', '2026-02-30 10:00:00+00', '2026-01-01 00:00:00+99', '2026-01-01 00:00:00-16', '2026-01-01 00:00:00+15:99']) {
      const after = Buffer.from(JSON.stringify(['customerLeads', updatedAt, '6ba7b810-9dad-11d1-80b4-00c04fd430c8'])).toString('base64url');
      const forged = await graphql(base(), paged.apiKey, `query($after: String) { customerLeads(after: $after) { edges { cursor } } }`, { after });
      expect(forged.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });
});

describe('PostgreSQL away', () => {
  // 57P03, "cannot connect now": what PostgreSQL says while it starts or stops.
  const away = (table: string, when: string) => refuseRows(app.orm, table, 'insert', when, '57P03');

  it('answers a lead write 503 `unavailable` with Retry-After, in the lead envelope, and the same write then goes through', async () => {
    const own = await createLeadTenant(app, { origins: [ORIGIN] });
    const sessionId = newSessionId();
    const write = () => postLead(base(), { email: 'ann@example.com', session_id: sessionId }, browser(ORIGIN, own.keys.test.publishableKey));
    const allow = await away('customer_leads', `new.tenant_id = ${own.id}`);
    let refused: Awaited<ReturnType<typeof write>>;
    try {
      refused = await write();
    } finally {
      await allow();
    }
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ ok: false, error: { code: 'unavailable', message: expect.stringMatching(/^The database could not be reached/), details: [] } });
    expect(refused.headers.get('retry-after')).toBe('5');
    // The browser's script may read it (its CORS headers), so the snippet keeps the lead for its next write.
    expect(refused.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(await leadRows(sessionId)).toEqual([]);
    expect((await write()).status).toBe(201);
  });

  it("answers GraphQL 503 SERVICE_UNAVAILABLE when the key's look-up meets it, never Apollo's context-creation 500", async () => {
    const own = await createLeadTenant(app);
    const keyIds = await app.orm.em.fork().execute<{ id: number }[]>(`select id from api_keys where tenant_id = ?`, [own.id]);
    const allow = await away('rate_limit_windows', `new.subject in (${keyIds.map(({ id }) => `'api-key:${id}'`).join(', ')})`);
    let response: Response;
    try {
      response = await fetch(`${base()}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${own.apiKey}` },
        body: JSON.stringify({ query: '{ customerLeads { edges { cursor } } }' }),
      });
    } finally {
      await allow();
    }
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]).toMatchObject({ message: expect.stringMatching(/^The database could not be reached/), extensions: { code: 'SERVICE_UNAVAILABLE' } });
    const again = await graphql(base(), own.apiKey, '{ customerLeads { edges { cursor } } }');
    expect(again).toEqual({ data: { customerLeads: { edges: [] } } });
  });
});
