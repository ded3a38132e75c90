import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { bearer, createLeadTenant, graphql, newSessionId, postLead } from './support/leads.ts';
import { createTestTenant } from './support/tenants.ts';

/**
 * Keys are found and counted by one statement on the counter pool, whose sessions commit asynchronously. The
 * limit must still hold exactly when a key's requests arrive all at once, over HTTP, for lead keys and API keys.
 * The clock is injected half-way through a minute, so no window rolls over mid-test and Retry-After is exact.
 */

let app: TestApp;
const NOW = new Date('2032-05-06T07:08:30.000Z');
const ORIGIN = 'https://shop.example';

beforeAll(async () => {
  app = await startTestApp({}, { now: () => NOW });
});
afterAll(() => app?.close());

const countStatuses = (statuses: number[]) => statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});

describe('the counter pool', () => {
  it('commits counts asynchronously, and everything else synchronously', async () => {
    const setting = async (em: ReturnType<TestApp['orm']['em']['fork']>) => (await em.execute<{ synchronous_commit: string }[]>(`show synchronous_commit`))[0]!.synchronous_commit;
    expect(await setting(app.counterOrm.em.fork())).toBe('off');
    expect(await setting(app.orm.em.fork())).toBe('on');
  });
});

describe('a key hit by many requests at once', () => {
  it('writes exactly the secret lead key limit, refusing the rest with 429 and Retry-After', async () => {
    const tenant = await createLeadTenant(app, { extra: { rateLimitPerMinute: 10 } });
    const sessions = Array.from({ length: 30 }, newSessionId);
    const answers = await Promise.all(sessions.map((session_id) => postLead(app.baseUrl, { email: 'a@example.com', session_id }, bearer(tenant.keys.test.secretKey))));
    expect(countStatuses(answers.map((a) => a.status))).toEqual({ 201: 10, 429: 20 });
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.body).toEqual({ ok: false, error: { code: 'rate_limited', message: 'Rate limit of 10 requests per minute exceeded', details: [] } });
      // Full at 30 s into the minute with a limit of 10: admitted again once 90 % of this window has slid out of the next.
      expect(refused.headers.get('retry-after')).toBe('36');
    }
    const written = await app.orm.em.fork().execute<{ n: string }[]>(`select count(*) as n from customer_leads where session_id = any(?::text[])`, [`{${sessions.join(',')}}`]);
    expect(Number(written[0]!.n)).toBe(10);
  });

  it('counts a browser key per address, and never a write from a foreign origin', async () => {
    const tenant = await createLeadTenant(app, { origins: [ORIGIN], extra: { rateLimitPerMinute: 5 } });
    const write = (origin: string) => postLead(app.baseUrl, { email: 'a@example.com', session_id: newSessionId() }, { 'x-service-lead-key': tenant.keys.test.publishableKey, origin });
    const foreign = await Promise.all(Array.from({ length: 8 }, () => write('https://evil.example')));
    expect(countStatuses(foreign.map((a) => a.status))).toEqual({ 403: 8 });
    expect(foreign[0]!.body.error).toMatchObject({ code: 'forbidden', message: 'Origin https://evil.example is not an allowed origin of this lead key' });
    const allowed = await Promise.all(Array.from({ length: 15 }, () => write(ORIGIN)));
    expect(countStatuses(allowed.map((a) => a.status))).toEqual({ 201: 5, 429: 10 });
  });

  it('answers exactly the API key limit across REST and GraphQL, which share its count', async () => {
    const tenant = await createTestTenant(app, { rateLimitPerMinute: 6 });
    const rest = () => fetch(`${app.baseUrl}/api/admin/statuses?pageSize=1`, { headers: tenant.adminHeaders }).then((r) => r.status);
    const viaGraphql = () => graphql(app.baseUrl, tenant.apiKey, '{ __typename }').then((r) => (r.errors ? r.errors[0].extensions.code : 'ok'));
    const [restStatuses, graphqlAnswers] = await Promise.all([Promise.all(Array.from({ length: 12 }, rest)), Promise.all(Array.from({ length: 8 }, viaGraphql))]);
    const admitted = restStatuses.filter((s) => s === 200).length + graphqlAnswers.filter((a) => a === 'ok').length;
    expect(admitted).toBe(6);
    expect(restStatuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
    expect(graphqlAnswers.filter((a) => a !== 'ok').every((code) => code === 'RATE_LIMITED')).toBe(true);
  });

  it('refuses an unknown key with 401, every time (it has no window to count in)', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => fetch(`${app.baseUrl}/api/admin/statuses?pageSize=1`, { headers: { authorization: 'Bearer sk_test_unknown' } })));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
    expect(await answers[0]!.json()).toEqual({ success: false, message: 'Invalid API key' });
  });

  it("names a customer-lead key sent in the API key's place, on REST and GraphQL", async () => {
    const tenant = await createLeadTenant(app);
    const leadKeyMessage = "Invalid API key: a secret customer-lead key works on the customer-leads API only; send the tenant's API key";
    const rest = await fetch(`${app.baseUrl}/api/admin/statuses?pageSize=1`, { headers: bearer(tenant.keys.test.secretKey) });
    expect({ status: rest.status, body: await rest.json() }).toEqual({ status: 401, body: { success: false, message: leadKeyMessage } });
    const viaGraphql = await graphql(app.baseUrl, tenant.keys.live.secretKey, '{ __typename }');
    expect(viaGraphql.errors?.[0]).toMatchObject({ message: leadKeyMessage, extensions: { code: 'UNAUTHENTICATED' } });
  });
});
