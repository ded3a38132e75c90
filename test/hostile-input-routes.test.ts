import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isExactlyWhole } from '../api/http/whole-numbers.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { undocumentedParts } from './support/openapi-answers.ts';
import { createMerchantTenant, merchantAccount, oneOffProduct, post, submitBody, type MerchantTenant } from './support/payments.ts';
import { paymentBody } from './support/payments-api.ts';
import { createEmailTenant, newRecipient, type EmailTenant } from './support/smtp-email.ts';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.ts';
import { createLeadTenant, newSessionId, type LeadTenant } from './support/leads.ts';
import { createTestTenant, type TestTenant } from './support/tenants.ts';

/**
 * Hostile input on the routes `hostile-input.test.ts` does not cover (the generic `/payments` API and subscriptions,
 * e-mail, customer leads, merchant-account administration and the mitigation search): whatever is sent, the answer is
 * never a 500, its status and body are what the OpenAPI document describes for that route, and a refused request
 * writes nothing.
 */

let sink: SmtpSink;
let app: TestApp;
let document: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
/** Payments API, subscriptions and mitigation search. */
let payer: MerchantTenant;
let emailer: EmailTenant;
let leads: LeadTenant;
/** Merchant-account administration: an account of its own, so updates cannot disturb the payments. */
let admin: TestTenant;
let adminAccountId: number;
/** An account of another tenant: never this key's to change. */
let foreignAccountId: number;
let paymentId: string;
let subscriptionId: number;

const ORIGIN = `https://hostile-${randomUUID().slice(0, 8)}.example`;
/** Every refused request counts against the key's (or tenant's) rate limit, and this file sends hundreds. */
const RATE_LIMIT = { rateLimitPerMinute: 100_000 };

beforeAll(async () => {
  sink = await startSmtpSink();
  app = await startTestApp({ SMTP_URL: sink.url });
  await app.startWorker();
  document = (await (await fetch(`${app.baseUrl}/openapi.json`)).json()) as typeof document;
  payer = await createMerchantTenant(app, {
    products: [
      oneOffProduct('payments-api', '0.00'),
      oneOffProduct('plan', '9.99', 'USD', { subscriptionPlan: { recurringAmount: '4.99', intervalDays: 30, gracePeriodDays: 3 } }),
    ],
    merchantAccounts: [merchantAccount('HPA-1', { acquiringBank: 'Bank 1' }), merchantAccount('HPA-2', { acquiringBank: 'Bank 2', monthlyCap: 999_999 })],
    ...RATE_LIMIT,
  });
  emailer = await createEmailTenant(app, RATE_LIMIT);
  leads = await createLeadTenant(app, { origins: [ORIGIN], extra: RATE_LIMIT });
  admin = await createTestTenant(app, { ...RATE_LIMIT, merchantAccounts: [merchantAccount(`HADM-${randomUUID().slice(0, 8)}`)] });
  adminAccountId = await accountIdOf(admin.id);
  foreignAccountId = await accountIdOf(payer.id);

  const paid = await send('POST', '/payments', { headers: bearer(payer.apiKey), body: JSON.stringify(paymentBody('4242424242424242', { amount: 99_900 })) });
  expect(paid).toMatchObject({ status: 200, body: { status: 'succeeded' } });
  paymentId = (paid.body as { id: string }).id;
  const subscribed = await post(app, `/api/${payer.products.plan}`, payer.apiKey, submitBody('4242424242424242'));
  expect(subscribed.body).toMatchObject({ info: 'Success', subscribeSuccess: true });
  subscriptionId = subscribed.body.subscriptionId as number;
});
afterAll(async () => {
  await app?.close();
  await sink?.close();
});

async function accountIdOf(tenantId: number): Promise<number> {
  const [row] = await app.orm.em.fork().execute<{ id: number }[]>(`select id from merchant_accounts where tenant_id = ? order by id limit 1`, [tenantId]);
  return row!.id;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

// ---------------------------------------------------------------------------------------------------------------
// Sending, and checking an answer against the document

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** A request as sent (the body as raw text, so numbers like 1e309 and broken JSON reach the gateway as written). */
async function send(method: string, path: string, options: { headers?: Record<string, string>; body?: string; contentType?: string } = {}): Promise<Answer> {
  const contentType = options.contentType ?? (options.body === undefined ? undefined : 'application/json');
  const response = await fetch(`${app.baseUrl}${path}`, { method, headers: { ...(contentType ? { 'content-type': contentType } : {}), ...options.headers }, body: options.body });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: response.status, body: text };
  }
}

const validators = new Map<string, ValidateFunction>();

/**
 * What `undocumentedParts` reports (same document, same ajv options), with each operation and status compiled once:
 * the helper fetches and compiles the whole document on every call (about 50 ms), too slow for hundreds of answers.
 * A test below checks the two agree.
 */
function undocumented(pathName: string, method: string, status: number, body: unknown): unknown[] {
  const pointer = `#/paths/${pathName.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/${status}/content/application~1json/schema`;
  let validate = validators.get(pointer);
  if (!validate) {
    const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false });
    ajv.addSchema(document, 'openapi.json');
    validate = ajv.compile({ $ref: `openapi.json${pointer}` });
    validators.set(pointer, validate);
  }
  return validate(body) ? [] : (validate.errors ?? []);
}

/** Answers seen, one per route and status, to compare the cached validator with `undocumentedParts`. */
const samples = new Map<string, { pathName: string; method: string; answer: Answer }>();

/** Never a 500; a status the document lists for the operation, with a body its schema for that status takes. */
function expectDocumented(pathName: string, method: string, answer: Answer, input: unknown): void {
  const label = `${method.toUpperCase()} ${pathName} → ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)} for ${describeInput(input)}`;
  expect(answer.status, label).not.toBe(500);
  expect(Object.keys(document.paths[pathName]![method]!.responses), label).toContain(String(answer.status));
  expect(undocumented(pathName, method, answer.status, answer.body), label).toEqual([]);
  samples.set(`${method} ${pathName} ${answer.status}`, { pathName, method, answer });
}

function describeInput(input: unknown): string {
  try {
    return (toJson(input) ?? String(input)).slice(0, 300);
  } catch {
    return String(input).slice(0, 300);
  }
}

/**
 * What a tenant has stored, to prove a refused request wrote nothing: row counts of everything a request can insert,
 * and the lead and merchant-account rows themselves (nothing changes those behind a request's back).
 */
async function footprint(tenantId: number): Promise<Record<string, unknown>> {
  const t = Number(tenantId);
  const [row] = await app.orm.em.fork().execute<Record<string, unknown>[]>(
    `select
       (select count(*) from orders where tenant_id = ${t})::int as orders,
       (select count(*) from transactions where tenant_id = ${t})::int as transactions,
       (select count(*) from refunds where tenant_id = ${t})::int as refunds,
       (select count(*) from subscriptions where tenant_id = ${t})::int as subscriptions,
       (select count(*) from customers where tenant_id = ${t})::int as customers,
       (select count(*) from idempotency_keys where tenant_id = ${t})::int as idempotency_keys,
       (select count(*) from submit_attempts where tenant_id = ${t})::int as submit_attempts,
       (select count(*) from emails where tenant_id = ${t})::int as emails,
       (select count(*) from email_idempotency_keys where tenant_id = ${t})::int as email_idempotency_keys,
       (select count(*) from customer_leads where tenant_id = ${t})::int as customer_leads,
       (select md5(coalesce(string_agg(l::text, ',' order by l.id), '')) from customer_leads l where tenant_id = ${t}) as lead_rows,
       (select coalesce(sum(row_version), 0) from merchant_accounts where tenant_id = ${t})::int as row_versions,
       (select md5(coalesce(string_agg(m::text, ',' order by m.id), '')) from merchant_accounts m where tenant_id = ${t}) as merchant_account_rows,
       (select count(*) from audit_entries where tenant_id = ${t}
          or (entity_type = 'MerchantAccount' and entity_id in (select id::text from merchant_accounts where tenant_id = ${t})))::int as audit_entries`,
  );
  return row!;
}

/** Sends, checks the answer is documented, and that a refusal (any non-2xx) left the tenant's rows as they were. */
async function expectHarmless(tenantId: number, pathName: string, method: string, input: unknown, request: () => Promise<Answer>): Promise<Answer> {
  const before = await footprint(tenantId);
  const answer = await request();
  expectDocumented(pathName, method, answer, input);
  if (answer.status >= 300) expect(await footprint(tenantId), `a refused ${method.toUpperCase()} ${pathName} (${answer.status}) wrote for ${describeInput(input)}`).toEqual(before);
  return answer;
}

// ---------------------------------------------------------------------------------------------------------------
// Hostile values

const NUL = '\u0000';
const LONE_SURROGATE = '\uD800';

/** JSON text written as is: numbers JSON.stringify cannot write (1e309, -0), deep nesting, broken JSON. */
class RawJson {
  constructor(readonly text: string) {}
  toString() {
    return this.text;
  }
}

/** JSON text of a value that may hold `RawJson` parts (lone surrogates are written as `\ud800` escapes). */
function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => `${JSON.stringify(key)}:${toJson(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A copy of `base` with the value at `path` replaced (created where missing). */
function withField(base: unknown, path: readonly (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const container = (Array.isArray(base) ? [...base] : base !== null && typeof base === 'object' ? { ...base } : {}) as Record<string | number, unknown>;
  Object.defineProperty(container, head!, { value: withField(container[head!], rest, value), enumerable: true, writable: true, configurable: true });
  return container;
}

const HUGE = 100 * 1024;

const hostileStrings = [
  '',
  ' ',
  NUL,
  `a${NUL}b`,
  LONE_SURROGATE,
  `x${LONE_SURROGATE}y`,
  '\uDC00',
  '\uDBFF\uDBFF',
  '%00',
  '\\u0000',
  'null',
  'NaN',
  '-0',
  'Infinity',
  '1e309',
  '0x10',
  "'; drop table orders; --",
  '<script>alert(1)</script>',
  '{{constructor.constructor("return process")()}}',
  '__proto__',
  '\u202Eevil',
  'line\r\nBcc: victim@example.com',
  'ａ@ｂ.ｃｏ',
  '4242424242424242',
];

/** Text that fits a query string or a header line. */
const shortHostileText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 3, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 300, maxLength: 600 }) },
);

/** Text of any size: up to 100 KiB (a body over a route's limit is a 413). */
const hostileText = fc.oneof(
  { weight: 6, arbitrary: shortHostileText },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(HUGE), 'é'.repeat(HUGE / 2), `${'a'.repeat(HUGE - 1)}${LONE_SURROGATE}`, `${'😀'.repeat(HUGE / 4)}${NUL}`) },
);

const rawNumberTexts = [
  '1e309',
  '-1e309',
  '1e400',
  '-0',
  '-0.0',
  '0',
  '-1',
  '0.5',
  '1.5',
  '19.99',
  '1e2',
  '1.0',
  '1E-400',
  '4.9e-324',
  '9007199254740993',
  // Read as whole numbers (1000, 2000) though they are not: refused, never charged rounded.
  '999.99999999999999999',
  '1999.99999999999999999',
  '99999999999999999999',
  '1e15',
  '99999999999991',
  '2147483647',
  '2147483648',
  '-2147483649',
  '0e5',
];

/**
 * Whether the sandbox answers an amount at once: minor units ending in 97 fail at the processor and in 98 answer 20 s
 * late, and a refund of one goes on after its answer, writing while a later request is being checked for writes.
 */
const answeredAtOnce = (amount: number) => !(Number.isInteger(amount) && [97, 98].includes(((amount % 100) + 100) % 100));

/** A number written as JSON text, including those JSON.stringify cannot write and doubles of every kind. */
const rawNumber = fc
  .oneof(
    fc.constantFrom(...rawNumberTexts),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? '-0' : String(d))),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 }).map(String),
  )
  .filter((text) => answeredAtOnce(Number(text)))
  .map((text) => new RawJson(text));

/** Nesting thousands deep, within `maxBytes` of JSON text. */
const deepNesting = (maxBytes: number) =>
  fc.tuple(fc.integer({ min: 2, max: Math.floor(maxBytes / 6) }), fc.boolean()).map(([depth, arrays]) => new RawJson(arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

const hostileKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', '', NUL, LONE_SURROGATE, 'toString', '$where', 'a.b', '[0]'), fc.string({ unit: 'binary', maxLength: 8 }));

/** Any hostile JSON value: text, numbers, the wrong shapes, deep nesting. */
const hostileValue = (maxBytes = 60_000) =>
  fc.oneof(
    { weight: 5, arbitrary: hostileText },
    { weight: 3, arbitrary: rawNumber },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }, [[[]]]) },
    { weight: 1, arbitrary: fc.array(shortHostileText, { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.dictionary(hostileKey, fc.oneof(shortHostileText, rawNumber), { maxKeys: 3 }) },
    { weight: 1, arbitrary: deepNesting(maxBytes) },
  );

/** A whole body that is no object of the route: other JSON, broken JSON, duplicate keys, a prototype key. */
const hostileBody = (maxBytes = 60_000) =>
  fc.oneof(
    hostileValue(maxBytes).map((value) => toJson(value)),
    fc.constantFrom('', ' ', '{', '{"amount":', 'not json', '{"a":1}}', '[1,]', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '\uFEFF{}', 'null', '{}{}', `{"a":"${NUL}"}`, '{"a":"\\ud800"}', '{"a":1e309}'),
  );

/** A header value fetch can send (Latin-1 without control characters), hostile otherwise. */
const headerText = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 80 }),
  fc.constantFrom('', ' ', 'x'.repeat(4_000), 'null', '../../etc/passwd', "' or 1=1 --", 'a@b.co\tc', 'é'),
);

/** Percent-encoded text; a lone surrogate as its WTF-8 bytes, which no UTF-8 decoder takes. */
function percentEncoded(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
      i++;
    }
    if (code < 0x80 && /[A-Za-z0-9_~-]/.test(String.fromCharCode(code))) {
      out += String.fromCharCode(code);
      continue;
    }
    const bytes =
      code < 0x80
        ? [code]
        : code < 0x800
          ? [0xc0 | (code >> 6), 0x80 | (code & 63)]
          : code < 0x10000
            ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63)]
            : [0xf0 | (code >> 18), 0x80 | ((code >> 12) & 63), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63)];
    out += bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

/** Escapes no decoder takes, or that decode to what the path or query must refuse. */
const brokenEscapes = fc.constantFrom('%', '%zz', '%ED%A0%80', '%FF', '%00', '%C0%AF', '%C0%80', '%E2%82', 'a%2', '%uD800', '%252F', '%2F', '%3F', '%23', '%26', '%3D', '+');

/** A query-string or path text: percent-encoded hostile text, or broken escapes, written as is. */
const encodedHostileText = fc.oneof(
  { weight: 3, arbitrary: shortHostileText.map(percentEncoded) },
  { weight: 1, arbitrary: fc.array(fc.oneof(brokenEscapes, fc.string({ unit: 'binary-ascii', maxLength: 3 }).map(percentEncoded)), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('')) },
);

/** A path segment: never empty, `.` or `..` (which address another path before the gateway sees them). */
const hostileSegment = (...known: string[]) =>
  fc
    .oneof(
      { weight: 3, arbitrary: encodedHostileText },
      { weight: 2, arbitrary: fc.constantFrom(...known, '0', '00', '01', '-1', '1e3', '1.0', '%201', '2147483647', '2147483648', '99999999999', '9'.repeat(600), '%EF%BC%91', 'null', 'undefined', '%00', '%2e%2e%2f') },
    )
    .filter((segment) => segment.length > 0 && !/^(\.|%2e){1,2}$/i.test(segment));

/** A JSON body's content type, now and then another. */
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', 'application/jsonx', 'application/json, text/plain', 'multipart/form-data; boundary=x') },
);

const RUNS = { numRuns: 35 };

// ---------------------------------------------------------------------------------------------------------------

describe('POST /payments', () => {
  const fields: (string | number)[][] = [
    ['amount'], ['currency'], ['card'], ['card', 'number'], ['card', 'exp_month'], ['card', 'exp_year'], ['card', 'cvc'], ['card', 'name'], ['card', 'extra'],
    ['email'], ['mid'], ['product'], ['capture'], ['cascade'], ['three_d_secure'], ['three_d_secure', 'enabled'], ['three_d_secure', 'cancel_on_fail'],
    ['partner_session'], ['metadata'], ['metadata', 'order'], ['unknown'],
  ];

  /** Values a payment may well carry, for the card checks (402) and the processing behind them. */
  const plausible = fc.constantFrom<unknown>(
    '4242424242424241', '6011000990139424', '4000000000000002', '4000000000003220', '5555555555554444', '4242 4242 4242 4242', '４２４２４２４２４２４２４２４２', '0000000000000000',
    2020, 20, 13, 0, 99, 9999, 1, '1', '12', '123', '1234', 'USD', 'JPY', 'KWD', 'a@b', 'a@b.c', 'İ@example.com', `${'i'.repeat(308)}@example.com`, 'e\u0301@example.com',
    'Ada Lovelace', ' ', 'x'.repeat(100), 'x'.repeat(101), '😀'.repeat(100), 1999, 500, 1230, true, false, { enabled: true }, { order: 'x'.repeat(500) },
    Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])),
  );

  it('answers hostile values in any field as documented, never 500, and a refusal writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: hostileKey.map((key) => [key]) }), fc.oneof({ weight: 3, arbitrary: hostileValue() }, { weight: 1, arbitrary: plausible }), async (path, value) => {
        const body = withField(paymentBody('4242424242424242'), path, value);
        await expectHarmless(payer.id, '/payments', 'post', body, () => send('POST', '/payments', { headers: bearer(payer.apiKey), body: toJson(body) }));
      }),
      RUNS,
    );
  });

  it('answers hostile amounts (raw JSON numbers, fractions, negatives, beyond the range) as documented, charging only a valid one', async () => {
    const amount = fc.oneof(rawNumber, fc.integer({ min: -1_000, max: 200_000 }).filter(answeredAtOnce));
    await fc.assert(
      fc.asyncProperty(amount, fc.constantFrom('USD', 'JPY', 'KWD', 'usd', 'XXX', 'EUR'), async (value, currency) => {
        const body = paymentBody('4242424242424242', { amount: value, currency });
        const answer = await expectHarmless(payer.id, '/payments', 'post', body, () => send('POST', '/payments', { headers: bearer(payer.apiKey), body: toJson(body) }));
        const parsed = Number(String(value));
        // Only the text of a whole number is one (999.99999999999999999 reads as 1000 and is not).
        if (!(Number.isSafeInteger(parsed) && isExactlyWhole(String(value), parsed) && parsed >= 1)) expect(answer.status, describeInput(body)).toBe(400);
        if (answer.status === 200) expect((answer.body as { amount: number }).amount).toBe(parsed);
      }),
      { numRuns: 30 },
    );
  });

  it('answers hostile whole bodies, content types and Idempotency-Keys as documented, writing nothing when refused', async () => {
    const body = fc.oneof({ weight: 2, arbitrary: hostileBody() }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.constant('valid') });
    await fc.assert(
      fc.asyncProperty(body, contentType, fc.option(headerText, { nil: undefined }), async (text, type, key) => {
        const sent = text === 'valid' ? JSON.stringify(paymentBody('4000000000000002')) : text;
        await expectHarmless(payer.id, '/payments', 'post', { body: sent, type, key }, () =>
          send('POST', '/payments', { headers: { ...bearer(payer.apiKey), ...(key === undefined ? {} : { 'idempotency-key': key }) }, body: sent, contentType: sent === undefined ? undefined : type }),
        );
      }),
      { numRuns: 30 },
    );
  });
});

describe('POST /payments/{id}/refund', () => {
  it('answers hostile payment ids and refund bodies as documented, never 500, refunding nothing when refused', async () => {
    const id = fc.oneof({ weight: 2, arbitrary: fc.constant('real') }, { weight: 3, arbitrary: hostileSegment('pay_0', 'pay_01', 'pay_2147483648', 'pay_2147483647', 'pay_-1', 'pay_1e3', 'pay_', 'PAY_1', 're_1') });
    const refundAmount = fc.oneof(rawNumber, fc.integer({ min: -10, max: 120_000 }).filter(answeredAtOnce));
    const body = fc.oneof(
      fc.constant(undefined),
      fc.record({ amount: fc.option(refundAmount, { nil: undefined }), reason: fc.option(hostileText, { nil: undefined }) }).map((fields) => toJson(fields)),
      fc.tuple(fc.oneof(fc.constantFrom('amount', 'reason'), hostileKey), hostileValue()).map(([key, value]) => toJson(withField({}, [key], value))),
      hostileBody(),
    );
    await fc.assert(
      fc.asyncProperty(id, body, async (which, text) => {
        const segment = which === 'real' ? paymentId : which;
        await expectHarmless(payer.id, '/payments/{id}/refund', 'post', { id: segment, body: text }, () =>
          send('POST', `/payments/${segment}/refund`, { headers: bearer(payer.apiKey), body: text }),
        );
      }),
      RUNS,
    );
  });
});

describe('GET /payments/{id}/refunds', () => {
  it('answers hostile payment ids and list query parameters as documented, never 500', async () => {
    const id = fc.oneof({ weight: 1, arbitrary: fc.constant('real') }, { weight: 2, arbitrary: hostileSegment('pay_0', 'pay_2147483648', 'pay_9999999999') });
    const query = fc.option(hostileQuery(['limit', 'starting_after', 'ending_before']), { nil: '' });
    await fc.assert(
      fc.asyncProperty(id, query, async (which, text) => {
        const segment = which === 'real' ? paymentId : which;
        await expectHarmless(payer.id, '/payments/{id}/refunds', 'get', { segment, text }, () => send('GET', `/payments/${segment}/refunds?${text}`, { headers: bearer(payer.apiKey) }));
      }),
      { numRuns: 25 },
    );
  });
});

/** Query values at and beyond the edges the routes name (bounds, ids, statuses, cursors). */
const QUERY_EDGES = [
  '', '1', '[]', '0', '100', '101', '253402300799', '253402300800', '99999999999990', '99999999999991', 'succeeded', 'lead', 'paid', 'pay_1', 'pay_2147483647', `re_${'0'.repeat(32)}`,
  '6e8bc430-9c3a-11d9-9669-0800200c9a66', 'urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66', 'buyer@example.com', 'İ'.repeat(320), '2147483648', ' 1', '1 ', '+1', '0x10', '1_000',
];

/** A query string of hostile names and values, percent-encoded or broken. */
const hostileQuery = (names: readonly string[]) =>
  fc
    .array(
      fc.tuple(
        fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...names).map(percentEncoded) }, { weight: 1, arbitrary: encodedHostileText }),
        fc.oneof(encodedHostileText, rawNumber.map((n) => percentEncoded(n.text)), fc.constantFrom(...QUERY_EDGES).map(percentEncoded)),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((pairs) => pairs.map(([name, value]) => `${name}=${value}`).join('&'));

describe('GET /payments', () => {
  it('answers hostile list query parameters (amount[gte] and the rest, repeated, broken, out of range) as documented, never 500', async () => {
    const names = ['status', 'created[gte]', 'created[lte]', 'amount[gte]', 'amount[lte]', 'email', 'mid', 'limit', 'starting_after', 'amount', 'amount[gt]', 'amount[gte][0]', 'amount[]'];
    await fc.assert(
      fc.asyncProperty(hostileQuery(names), async (query) => {
        const answer = await expectHarmless(payer.id, '/payments', 'get', query, () => send('GET', `/payments?${query}`, { headers: bearer(payer.apiKey) }));
        if (answer.status === 200) expect((answer.body as { data: unknown[] }).data.length).toBeLessThanOrEqual(100);
      }),
      { numRuns: 40 },
    );
  });
});

describe('POST /subscriptions/{id}/cancel|pause|resume', () => {
  it('answers odd subscription ids and bodies as documented, never 500, changing nothing when refused', async () => {
    const id = fc.oneof({ weight: 1, arbitrary: fc.constant('real') }, { weight: 4, arbitrary: hostileSegment('sub_1', '2147483647', '1%20', '+1', '0x1') });
    const body = fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant('{}') }, { weight: 3, arbitrary: hostileBody() }, {
      weight: 2,
      arbitrary: fc.tuple(fc.oneof(fc.constantFrom('reason', 'at_period_end', 'id'), hostileKey), hostileValue()).map(([key, value]) => toJson(withField({}, [key], value))),
    });
    await fc.assert(
      fc.asyncProperty(id, fc.constantFrom('cancel', 'pause', 'resume'), body, async (which, action, text) => {
        const segment = which === 'real' ? String(subscriptionId) : which;
        const before = await subscriptionRow();
        await expectHarmless(payer.id, `/subscriptions/{id}/${action}`, 'post', { id: segment, body: text }, async () => {
          const answer = await send('POST', `/subscriptions/${segment}/${action}`, { headers: bearer(payer.apiKey), body: text });
          if (answer.status >= 300) expect(await subscriptionRow(), `a refused ${action} of ${segment} changed the subscription`).toEqual(before);
          // A taken action may answer before its workflow wrote it (the row follows the workflow): the next request's
          // "before" waits for it, so that write is never taken for a refused request's.
          else if (which === 'real') await vi.waitFor(async () => expect(settledAs(action, await subscriptionRow())).toBe(true), { timeout: 30_000, interval: 100 });
          return answer;
        });
      }),
      { numRuns: 30 },
    );
  });
});

/** Whether the row shows a taken action: cancelled, or (while not cancelled) paused or resumed as asked. */
function settledAs(action: 'cancel' | 'pause' | 'resume', row: Record<string, unknown> | undefined): boolean {
  if (row?.state === 'cancelled') return true;
  return action === 'pause' ? row?.paused_at !== null : action === 'resume' ? row?.paused_at === null : false;
}

async function subscriptionRow() {
  const [row] = await app.orm.em.fork().execute<Record<string, unknown>[]>(`select state, paused_at, cancelled_at, cancel_reason from subscriptions where id = ?`, [subscriptionId]);
  return row;
}

// ---------------------------------------------------------------------------------------------------------------

const email = (overrides: Record<string, unknown> = {}) => ({
  from: `Shop <orders@${emailer.domain}>`,
  to: newRecipient(),
  subject: 'Your order',
  templateType: 'react',
  templateName: 'generic',
  data: { heading: 'Thanks', bodyContent: 'First paragraph.', ctaText: 'Track it', ctaUrl: 'https://shop.example/track' },
  ...overrides,
});

const emailFields: (string | number)[][] = [
  ['from'], ['to'], ['to', 0], ['to', 1], ['subject'], ['replyTo'], ['cc'], ['bcc'], ['bcc', 0], ['templateType'], ['templateName'], ['templateContent'],
  ['data'], ['data', 'heading'], ['data', 'bodyContent'], ['data', 'ctaUrl'], ['data', 'items'], ['extra'],
];

describe('POST /api/email and /api/email/batch', () => {
  it('answers hostile from/to/subject/template/data fields of one e-mail as documented, never 500, queueing nothing when refused', async () => {
    const field = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...emailFields, ['tenant_key'], ['idempotencyKey']) }, { weight: 1, arbitrary: hostileKey.map((key) => [key]) });
    const template = fc.constantFrom('react', 'string');
    await fc.assert(
      fc.asyncProperty(field, hostileValue(200_000), template, async (path, value, templateType) => {
        const base = { tenant_key: emailer.tenantKey, ...email(templateType === 'string' ? { templateType, templateName: undefined, templateContent: '<p>Hi {{heading}}</p>' } : {}) };
        const body = withField(base, path, value);
        await expectHarmless(emailer.id, '/api/email', 'post', body, () => send('POST', '/api/email', { body: toJson(body) }));
      }),
      RUNS,
    );
  });

  it('answers hostile batches (items, item fields, the tenant key, whole bodies) as documented, never 500, queueing nothing when refused', async () => {
    const field = fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fc.constantFrom(0, 1), fc.constantFrom(...emailFields)).map(([index, path]) => ['emails', index, ...path]) },
      { weight: 1, arbitrary: fc.constantFrom(['emails'], ['emails', 0], ['emails', 2], ['tenant_key'], ['idempotencyKey'], ['extra']) },
    );
    const body = fc.oneof(
      { weight: 4, arbitrary: fc.tuple(field, hostileValue(200_000)).map(([path, value]) => toJson(withField({ tenant_key: emailer.tenantKey, emails: [email(), email()] }, path, value))) },
      { weight: 1, arbitrary: hostileBody(200_000) },
      // One over the limit of 100 e-mails.
      { weight: 1, arbitrary: fc.constant(null).map(() => toJson({ tenant_key: emailer.tenantKey, emails: Array.from({ length: 101 }, () => email()) })) },
    );
    await fc.assert(
      fc.asyncProperty(body, contentType, async (text, type) => {
        await expectHarmless(emailer.id, '/api/email/batch', 'post', text, () => send('POST', '/api/email/batch', { body: text, contentType: type }));
      }),
      { numRuns: 30 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('/api/public/customer-leads', () => {
  const leadFields: (string | number)[][] = [
    ['email'], ['session_id'], ['first_name'], ['last_name'], ['phone'], ['scans'], ['scans', 0], ['scans', 0, 'page'], ['scans', 0, 'extra'], ['pending_data_b64'],
    ['cfa_device'], ['d2d_rep'], ['tenant_id'], ['status'], ['transaction_id'], ['unknown'],
  ];

  it('answers hostile lead writes from a browser (publishable key + Origin) or a server as documented, never 500, writing nothing when refused', async () => {
    const field = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...leadFields) }, { weight: 1, arbitrary: hostileKey.map((key) => [key]) });
    const write = fc.oneof(
      { weight: 4, arbitrary: fc.tuple(field, hostileValue(200_000)).map(([path, value]) => toJson(withField({ email: 'buyer@example.com', session_id: newSessionId(), scans: [{ page: '/checkout' }] }, path, value))) },
      { weight: 1, arbitrary: hostileBody(200_000) },
    );
    const caller = fc.oneof(
      { weight: 3, arbitrary: fc.constant<Record<string, string>>({ 'x-service-lead-key': leads.keys.test.publishableKey, origin: ORIGIN }) },
      { weight: 2, arbitrary: fc.constant<Record<string, string>>(bearer(leads.keys.live.secretKey)) },
      { weight: 1, arbitrary: fc.tuple(headerText, headerText).map(([key, origin]) => ({ 'x-service-lead-key': key, origin })) },
      { weight: 1, arbitrary: headerText.map((origin) => ({ 'x-service-lead-key': leads.keys.test.publishableKey, origin })) },
    );
    await fc.assert(
      fc.asyncProperty(write, caller, contentType, async (text, headers, type) => {
        await expectHarmless(leads.id, '/api/public/customer-leads', 'post', { text, headers }, () => send('POST', '/api/public/customer-leads', { headers, body: text, contentType: type }));
      }),
      RUNS,
    );
  });

  it('answers hostile list query parameters as documented, never 500', async () => {
    const names = ['id', 'email', 'session_id', 'transaction_id', 'subscription_id', 'status', 'limit', 'cursor', 'tenant_id'];
    const key = fc.constantFrom(bearer(leads.keys.test.secretKey), bearer(leads.keys.live.secretKey), { 'x-service-lead-key': leads.keys.test.publishableKey, origin: ORIGIN });
    await fc.assert(
      fc.asyncProperty(hostileQuery(names), key, async (query, headers) => {
        await expectHarmless(leads.id, '/api/public/customer-leads', 'get', query, () => send('GET', `/api/public/customer-leads?${query}`, { headers }));
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('PUT /api/admin/merchantaccounts/{id}', () => {
  const accountFields: (string | number)[][] = [
    ['title'], ['agent'], ['mcc'], ['maxPrice'], ['monthlyCap'], ['reservePercentage'], ['discountRatePercentage'], ['capLimited'], ['currencies'], ['currencies', 0],
    ['currencies', 0, 'currency'], ['currencies', 0, 'gatewayCredentials'], ['currencies', 0, 'gatewayCredentials', 'apiKey'], ['notes'], ['midOwnerId'], ['defaultCurrency'],
    ['id'], ['mid'], ['companyId'], ['gateway'], ['gatewayId'], ['parentCompanyId'], ['rowVersion'], ['acquirerBINNetworkA'], ['brandId'], ['brand'], ['verticalId'],
    ['fullyLive'], ['dynamicDescriptorFormat'], ['unknown'],
  ];

  /** Values an account may well take, so some updates go through (and bump the version the next one must send). */
  const plausibleAccountValue = fc.constantFrom<unknown>(
    'Title', '\u200b', 'EUR', 'USD', '999999999999.99', 999999999999.99, '1000000000000', 0, 1, 0.5, 2147483647, 2147483648, -1, '2026-01-01T00:00:00Z', '2026-02-30T00:00:00Z',
    '9999-12-31T23:59:60Z', null, [{ currency: 'USD' }], [{ currency: 'USD' }, { currency: 'USD' }], [{ currency: 'EUR', gatewayCredentials: { apiKey: '****' } }], '1234', '12345678901', 'x'.repeat(10_001),
  );

  it('answers hostile account ids, bodies and admin headers as documented, never 500, changing nothing when refused', async () => {
    const id = fc.oneof({ weight: 4, arbitrary: fc.constant('own') }, { weight: 1, arbitrary: fc.constant('foreign') }, { weight: 2, arbitrary: hostileSegment('2147483648', '-1') });
    const change = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.tuple(
          fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...accountFields) }, { weight: 1, arbitrary: hostileKey.map((key) => [key]) }),
          fc.oneof({ weight: 3, arbitrary: hostileValue() }, { weight: 2, arbitrary: plausibleAccountValue }),
        ),
      },
      { weight: 1, arbitrary: hostileBody().map((text) => [[], new RawJson(text)] as const) },
    );
    const headers = fc.oneof(
      { weight: 5, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: fc.record({ clientid: headerText }) },
      { weight: 1, arbitrary: fc.record({ useremail: fc.oneof(headerText, fc.constantFrom(`${'a'.repeat(310)}@example.com`, 'ops@example.com', ' ops@example.com ')) }) },
    );
    await fc.assert(
      fc.asyncProperty(id, change, headers, async (which, [path, value], overrides) => {
        const [{ row_version: rowVersion }] = await app.orm.em.fork().execute<[{ row_version: number }]>(`select row_version from merchant_accounts where id = ?`, [adminAccountId]);
        const segment = which === 'own' ? String(adminAccountId) : which === 'foreign' ? String(foreignAccountId) : which;
        const body = withField({ rowVersion }, path, value);
        const text = value instanceof RawJson && path.length === 0 ? value.text : toJson(body);
        await expectHarmless(admin.id, '/api/admin/merchantaccounts/{id}', 'put', { segment, text, overrides }, () =>
          send('PUT', `/api/admin/merchantaccounts/${segment}`, { headers: { ...admin.adminHeaders, ...overrides }, body: text }),
        );
      }),
      RUNS,
    );
  });
});

describe('POST /api/mitigation/transactions', () => {
  const filters = [
    'pageNumber', 'limit', 'emails', 'orderIds', 'transactionIds', 'gatewayTransactionIds', 'bin', 'last4', 'firstName', 'lastName', 'authCodes', 'currency', 'dateFrom', 'dateTo',
    'descriptorContains', 'sandbox', 'applicationIds', 'productIds', 'campaignIds', 'merchantAccountIds', 'companyIds', 'subscriptionIds', 'amounts', 'includeUpdated', 'unknown',
  ];

  it('answers hostile filters (and arrays of them) as documented, never 500, writing nothing', async () => {
    const plausible = fc.constantFrom<unknown>(
      ['buyer@example.com'], ['İ'.repeat(320)], [1], [2147483647], [2147483648], '424242', '4242', 'USD', 'usd', '2026-01-01', '2026-02-30', '0000-01-01', true, 1, 1000, 1001, 500000, 500001,
      [19.99], [0.001], ['00000000-0000-0000-0000-000000000000'], ['urn:uuid:00000000-0000-0000-0000-000000000000'], '%%%', '\\\\', '___', Array.from({ length: 1001 }, (_, i) => i + 1),
    );
    const filter = fc.tuple(
      fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...filters) }, { weight: 1, arbitrary: hostileKey }),
      fc.oneof({ weight: 2, arbitrary: hostileValue() }, { weight: 1, arbitrary: fc.array(fc.oneof(shortHostileText, rawNumber), { minLength: 1, maxLength: 3 }) }, { weight: 2, arbitrary: plausible }),
    );
    const body = fc.oneof({ weight: 5, arbitrary: fc.array(filter, { minLength: 1, maxLength: 3 }).map((pairs) => toJson(pairs.reduce<unknown>((acc, [key, value]) => withField(acc, [key], value), {}))) }, { weight: 1, arbitrary: hostileBody() });
    await fc.assert(
      fc.asyncProperty(body, contentType, async (text, type) => {
        await expectHarmless(payer.id, '/api/mitigation/transactions', 'post', text, () => send('POST', '/api/mitigation/transactions', { headers: payer.adminHeaders, body: text, contentType: type }));
      }),
      RUNS,
    );
  });
});

describe('the check itself', () => {
  it('agrees with undocumentedParts on an answer of every route and status seen, and on an answer not documented', async () => {
    expectDocumented('/payments', 'post', await send('POST', '/payments', { headers: bearer(payer.apiKey), body: '{"amount":' }), 'broken JSON');
    expectDocumented('/api/public/customer-leads', 'post', await send('POST', '/api/public/customer-leads', { headers: bearer(leads.keys.live.secretKey), body: '{}' }), '{}');
    for (const { pathName, method, answer } of samples.values()) {
      expect(await undocumentedParts(app.baseUrl, pathName, method, answer.status, answer.body), `${method} ${pathName} ${answer.status}`).toEqual([]);
    }
    const wrong = { error: { type: 'card_error', code: 7 } };
    expect(undocumented('/payments', 'post', 400, wrong)).not.toEqual([]);
    expect(await undocumentedParts(app.baseUrl, '/payments', 'post', 400, wrong)).not.toEqual([]);
  });
});
