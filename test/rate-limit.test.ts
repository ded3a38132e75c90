import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeRateLimit } from '../services/rate-limit/rate-limiter.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createPaymentTenant, submitBody } from './support/payments.ts';
import { createTestTenant } from './support/tenants.ts';

/**
 * The per-key rate limit: a sliding one-minute window counted in PostgreSQL. The limiter takes the clock as an
 * argument, so windows are exercised here with an injected `now` against the real database, without
 * waiting for a minute to pass.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

/** A minute boundary: windows start on whole minutes. */
const WINDOW = Date.parse('2031-03-04T05:06:00.000Z');
const at = (offsetMs: number) => new Date(WINDOW + offsetMs);
const subject = () => `test:${randomUUID()}`;

const consume = (key: string, limit: number, now: Date) => consumeRateLimit(app.orm.em.fork(), key, limit, now);

/** The seconds a refused request is told to wait, or 'allowed'. */
async function outcome(key: string, limit: number, now: Date): Promise<number | 'allowed'> {
  try {
    await consume(key, limit, now);
    return 'allowed';
  } catch (error) {
    expect(error).toMatchObject({ code: 'rate_limited', message: `Rate limit of ${limit} requests per minute exceeded` });
    return (error as { details: { retryAfterSeconds: number } }).details.retryAfterSeconds;
  }
}

describe('rate limiter (injected clock, real database)', () => {
  it('allows the limit within a first window, and refuses the next request', async () => {
    const key = subject();
    expect(await outcome(key, 3, at(0))).toBe('allowed');
    expect(await outcome(key, 3, at(30_000))).toBe('allowed');
    expect(await outcome(key, 3, at(59_999))).toBe('allowed');
    expect(await outcome(key, 3, at(59_999))).not.toBe('allowed');
  });

  it('gives no double burst at a window edge: the limit at 59.9 s, then only what has slid out at 60.1 s', async () => {
    const key = subject();
    const burst = async (count: number, now: Date) => (await Promise.all(Array.from({ length: count }, () => outcome(key, 100, now)))).filter((r) => r === 'allowed').length;
    expect(await burst(100, at(59_900))).toBe(100);
    // 0.1 s into the next minute the previous one still counts 99.8 %: no room for a second hundred.
    expect(await burst(100, at(60_100))).toBe(0);
    // Half a minute later half of it has slid out.
    expect(await burst(100, at(90_000))).toBe(50);
  });

  it('tells a refused caller when the sliding window admits it again', async () => {
    const key = subject();
    expect(await outcome(key, 1, at(0))).toBe('allowed');
    // Full in this window, and with a limit of 1 the request weighs on the next window until it has slid out
    // completely: the end of the next minute.
    expect(await outcome(key, 1, at(0))).toBe(120);
    expect(await outcome(key, 1, at(30_500))).toBe(90);
    expect(await outcome(key, 1, at(59_999))).toBe(61);
    // In the next window the previous request still weighs until the minute has passed.
    expect(await outcome(key, 1, at(60_000 + 15_000))).toBe(45);
    expect(await outcome(key, 1, at(120_000))).toBe('allowed');
  });

  it('does not count refused requests, so hammering does not extend the wait', async () => {
    const key = subject();
    expect(await outcome(key, 2, at(10_000))).toBe('allowed');
    expect(await outcome(key, 2, at(20_000))).toBe('allowed');
    for (let i = 0; i < 5; i++) expect(await outcome(key, 2, at(40_000))).not.toBe('allowed');
    // Two minutes on, nothing of those two windows remains.
    expect(await outcome(key, 2, at(120_000))).toBe('allowed');
    expect(await outcome(key, 2, at(120_001))).toBe('allowed');
    expect(await outcome(key, 2, at(120_002))).not.toBe('allowed');
  });

  it('counts each subject on its own', async () => {
    const first = subject();
    const second = subject();
    expect(await outcome(first, 1, at(0))).toBe('allowed');
    expect(await outcome(first, 1, at(1_000))).toBe(119);
    expect(await outcome(second, 1, at(1_000))).toBe('allowed');
  });

  it('holds the limit exactly under concurrent requests', async () => {
    const key = subject();
    const results = await Promise.all(Array.from({ length: 12 }, () => outcome(key, 5, at(5_000))));
    expect(results.filter((r) => r === 'allowed')).toHaveLength(5);
    expect(results.filter((r) => r !== 'allowed')).toHaveLength(7);
  });
});

/**
 * Sends a request until one is refused. With a limit of 1 per minute, two of any three requests in a row
 * fall in the same window, so the second or the third is refused. Answers the clock read before and after
 * the refused request.
 */
async function firstRefusal(send: () => Promise<Response>) {
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const before = Date.now();
    const response = await send();
    const after = Date.now();
    statuses.push(response.status);
    if (response.status === 429) return { response, before, after, statuses };
  }
  throw new Error(`no request was refused: ${statuses.join(', ')}`);
}

/** Retry-After is whole seconds, at most two windows away (a full current window, then its weight sliding out). */
function expectRetryAfterToWindowEnd({ response }: { response: Response }) {
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(120);
}

describe('429 over HTTP', () => {
  it('refuses the admin API over the per-tenant limit with Retry-After; another key is counted apart', async () => {
    const tenant = await createTestTenant(app, { rateLimitPerMinute: 1 });
    const refusal = await firstRefusal(() => fetch(`${app.baseUrl}/api/admin/statuses?pageSize=1`, { headers: tenant.adminHeaders }));
    expect(refusal.statuses.slice(0, -1)).toContain(200);
    expect(await refusal.response.json()).toEqual({ success: false, message: 'Rate limit of 1 requests per minute exceeded' });
    expectRetryAfterToWindowEnd(refusal);
    const other = await createTestTenant(app, { rateLimitPerMinute: 1 });
    expect((await fetch(`${app.baseUrl}/api/admin/statuses?pageSize=1`, { headers: other.adminHeaders })).status).toBe(200);
  });

  it('refuses a payment submit over the limit with Retry-After', async () => {
    const tenant = await createPaymentTenant(app, { rateLimitPerMinute: 1 });
    // A card that fails pre-processing: answered by the gateway alone, no worker needed.
    const body = JSON.stringify(submitBody('4242424242424241'));
    const refusal = await firstRefusal(() =>
      fetch(`${app.baseUrl}/api/${tenant.productId}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: tenant.apiKey }, body }),
    );
    expect(refusal.statuses.slice(0, -1)).toContain(200);
    expect(await refusal.response.json()).toEqual({ success: false, message: 'Rate limit of 1 requests per minute exceeded' });
    expectRetryAfterToWindowEnd(refusal);
  });
});
