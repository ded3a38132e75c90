import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuthorizationOutcome, AuthorizationRequest, ProcessorGateway, RawExchange } from '../adapters/processors/processor-gateway.ts';
import { createProcessorRegistry } from '../adapters/processors/registry.ts';
import { createSandboxAdapter } from '../adapters/processors/sandbox.adapter.ts';
import { startSandboxProcessor, type SandboxProcessor } from '../sandbox/processor-server.ts';
import { TEST_CARDS, luhnValid, testCardsMarkdown } from '../sandbox/test-cards.ts';
import { maskCardEcho } from '../domain/payments/card-echo.ts';
import { freePort } from './support/free-port.ts';

/**
 * The sandbox processor, started for real, exercised through its adapter over HTTP. Nothing is mocked.
 */

const TIMEOUT = 5_000;
const SLOW_MS = 1_500;
const CVV = '987';

let sandbox: SandboxProcessor;
let adapter: ProcessorGateway;
/** Every exchange seen, checked at the end for card data. */
const exchanges: RawExchange[] = [];
const cardNumbersUsed = new Set<string>();

beforeAll(async () => {
  sandbox = await startSandboxProcessor({ slowResponseMs: SLOW_MS });
  adapter = createSandboxAdapter({ baseUrl: sandbox.url });
});

afterAll(async () => {
  await sandbox?.close();
});

function request(number: string, overrides: Partial<AuthorizationRequest> = {}): AuthorizationRequest {
  cardNumbersUsed.add(number);
  return {
    reference: `att_${randomUUID()}`,
    orderReference: `ord_${randomUUID()}`,
    merchantId: 'mid-1',
    amount: '29.99',
    currency: 'EUR',
    card: { number, expiryMonth: 12, expiryYear: 2031, cvv: CVV, holderName: 'Ada Lovelace' },
    threeDSecure: false,
    credentials: { apiKey: 'sandbox-key' },
    ...overrides,
  };
}

async function authorize(req: AuthorizationRequest, timeoutMs = TIMEOUT) {
  const result = await adapter.authorize(req, timeoutMs);
  exchanges.push(result.exchange);
  return result;
}
async function inquire(reference: string, timeoutMs = TIMEOUT) {
  const result = await adapter.inquire(reference, timeoutMs);
  exchanges.push(result.exchange);
  return result;
}
async function complete3ds(id: string, proceed: boolean) {
  const result = await adapter.complete3ds(id, proceed, TIMEOUT);
  exchanges.push(result.exchange);
  return result;
}

function challengeOf(outcome: AuthorizationOutcome) {
  if (outcome.kind !== 'challenge') throw new Error(`expected a challenge, got ${JSON.stringify(outcome)}`);
  return outcome;
}

async function chooseOnChallengePage(challengeUrl: string, outcome: 'authenticate' | 'fail', as: 'form' | 'json' = 'form') {
  const response = await fetch(challengeUrl, {
    method: 'POST',
    headers: { 'content-type': as === 'form' ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: as === 'form' ? new URLSearchParams({ outcome }).toString() : JSON.stringify({ outcome }),
  });
  expect(response.status).toBe(200);
  return response;
}

const approved = (extra: Record<string, unknown> = {}) => ({
  kind: 'approved',
  statusId: 2636,
  processorTransactionId: expect.stringMatching(/^sbx_[0-9a-f-]{36}$/),
  authCode: expect.stringMatching(/^[A-Z0-9]{6}$/),
  ...extra,
});
const declined = (statusId: number, message: string) => ({
  kind: 'declined',
  statusId,
  message,
  processorTransactionId: expect.stringMatching(/^sbx_/),
});

describe('test cards', () => {
  const expectations: Record<string, ReturnType<typeof approved> | ReturnType<typeof declined>> = {
    '4242424242424242': approved(),
    '5555555555554444': approved(),
    '4000000000000002': declined(3617, 'Declined'),
    '4000000000009995': declined(3512, 'Insufficient Funds'),
    '4000000000000069': declined(3137, 'Card Expired'),
    '4000000000000127': declined(3627, 'Invalid card security code'),
    '4000000000000119': declined(4273, 'Processing Error - Try Again'),
    // Challenge cards without 3-D Secure.
    '4000000000003220': declined(4167, 'Strong Customer Authentication Required'),
    '4000000000003063': declined(4167, 'Strong Customer Authentication Required'),
    // Cascade card on the first merchant of its order.
    '4000000000000341': declined(3617, 'Declined'),
    '4000000000000101': approved(),
    '4000000760000002': approved(),
    // Not in the table: any Luhn-valid number is approved, a Luhn-invalid one declined.
    '4111111111111111': approved(),
    '4242424242424241': declined(3256, 'Invalid credit card number'),
  };

  it('every card of the table is Luhn-valid and has an expectation here', () => {
    for (const card of TEST_CARDS) {
      expect(luhnValid(card.pan), card.pan).toBe(true);
      const redirect = card.behaviour.kind === 'challenge' && card.behaviour.redirect === true;
      expect(redirect || expectations[card.pan] !== undefined, card.pan).toBe(true);
    }
    expect(testCardsMarkdown()).toContain('| `4000000000000341` |');
  });

  it("is every card the README's summary names (in full, or as `…` and its last four)", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Sandbox card processor'), readme.indexOf('\n## ', readme.indexOf('### Sandbox card processor')));
    for (const card of TEST_CARDS) expect(section.includes(`\`${card.pan}\``) || section.includes(`\`…${card.pan.slice(-4)}\``), card.pan).toBe(true);
  });

  it('approves a merchant-initiated charge of a challenge card (a rebill: its holder authenticated at the checkout)', async () => {
    for (const number of ['4000000000003220', '4000000000003063']) {
      const { outcome } = await authorize({ ...request(number), merchantInitiated: true });
      expect(outcome, number).toEqual(approved());
    }
  });

  it.each(Object.entries(expectations))('%s without 3-D Secure', async (number, expected) => {
    const { outcome, exchange } = await authorize(request(number));
    expect(outcome).toEqual(expected);
    expect(exchange.gateway).toBe('sandbox');
    expect(exchange.httpStatus).toBe(200);
    expect(outcome.kind === 'approved' && outcome.eci).toBeFalsy();
    const body = JSON.parse(exchange.response);
    expect(body.code).toBe((expected as { statusId: number }).statusId);
    // The id as kept: masked like any digits that pass Luhn (now and then a UUID's digit groups do).
    expect(body.id).toBe(maskCardEcho((outcome as { processorTransactionId: string }).processorTransactionId));
  });

  it('the redirect card asks for the browser even without 3-D Secure', async () => {
    const { outcome } = await authorize(request('4000000000003246'));
    expect(outcome).toEqual({ kind: 'challenge', processorTransactionId: expect.stringMatching(/^sbx_/), challengeUrl: expect.stringContaining('/challenge/'), redirect: true });
  });

  it('the security-code card is declined 3627 when sent without a CVV (any other card is approved without one)', async () => {
    const withoutCvv = (number: string) => {
      const sent = request(number);
      return { ...sent, card: { ...sent.card, cvv: undefined } };
    };
    expect((await authorize(withoutCvv('4000000000000101'))).outcome).toEqual(declined(3627, 'Invalid card security code'));
    expect((await authorize(withoutCvv('4242424242424242'))).outcome).toEqual(approved());
  });

  it('frictionless 3-D Secure approvals carry an ECI (05 NetworkA, 02 NetworkB)', async () => {
    expect((await authorize(request('4242424242424242', { threeDSecure: true }))).outcome).toEqual(approved({ eci: '05' }));
    expect((await authorize(request('5555555555554444', { threeDSecure: true }))).outcome).toEqual(approved({ eci: '02' }));
  });

  it('the cascade card is declined on the first merchant of an order and approved on another', async () => {
    const orderReference = `ord_${randomUUID()}`;
    const first = await authorize(request('4000000000000341', { orderReference, merchantId: 'mid-a' }));
    expect(first.outcome).toEqual(declined(3617, 'Declined'));
    const second = await authorize(request('4000000000000341', { orderReference, merchantId: 'mid-b' }));
    expect(second.outcome).toEqual(approved());
    const againOnFirst = await authorize(request('4000000000000341', { orderReference, merchantId: 'mid-a' }));
    expect(againOnFirst.outcome).toEqual(declined(3617, 'Declined'));
    expect(sandbox.stats().byOrderReference[orderReference]).toBe(3);
  });
});

describe('idempotency and status inquiry', () => {
  it('the same reference authorizes once and answers the same', async () => {
    const req = request('4242424242424242');
    const first = await authorize(req);
    const second = await authorize({ ...req });
    expect(first.outcome.kind).toBe('approved');
    expect(second.outcome).toEqual(first.outcome);
    expect(second.exchange.response).toBe(first.exchange.response);

    expect(sandbox.stats().byReference[req.reference]).toBe(1);
    expect(sandbox.stats().byOrderReference[req.orderReference]).toBe(1);
    const overHttp = (await (await fetch(`${sandbox.url}/v1/_stats`)).json()) as { totalAuthorizations: number; byReference: Record<string, number> };
    expect(overHttp.byReference[req.reference]).toBe(1);
    expect(overHttp.totalAuthorizations).toBe(sandbox.stats().totalAuthorizations);
  });

  it('a reference sent again with another amount, card or merchant is refused (3645), not answered with the first payment', async () => {
    const req = request('4242424242424242');
    const first = await authorize(req);
    expect(first.outcome.kind).toBe('approved');
    for (const [other, field] of [
      [{ amount: '30.00' }, 'amount'],
      [{ card: { ...req.card, number: '5555555555554444' } }, 'card'],
      [{ merchantId: 'mid-2' }, 'merchantId'],
    ] as const) {
      if ('card' in other) cardNumbersUsed.add(other.card.number);
      const reused = await authorize({ ...req, ...other });
      expect(reused.outcome).toEqual({ kind: 'declined', statusId: 3645, message: 'Duplicate transaction at processor: its reference was used before with other details' });
      expect(JSON.parse(reused.exchange.response)).toEqual({ error: 'reference_reused', fields: [field] });
    }
    // The first payment is untouched: the same request still answers it, and only it was authorized.
    expect((await authorize({ ...req })).outcome).toEqual(first.outcome);
    expect((await inquire(req.reference)).outcome).toEqual(first.outcome);
    expect(sandbox.stats().byOrderReference[req.orderReference]).toBe(1);
  });

  it('inquiry returns the stored outcome, and null for an unknown reference', async () => {
    const approvedReq = request('4242424242424242');
    const approvedResult = await authorize(approvedReq);
    expect((await inquire(approvedReq.reference)).outcome).toEqual(approvedResult.outcome);

    const declinedReq = request('4000000000009995');
    const declinedResult = await authorize(declinedReq);
    expect((await inquire(declinedReq.reference)).outcome).toEqual(declinedResult.outcome);

    const unknown = await inquire(`att_${randomUUID()}`);
    expect(unknown.outcome).toBeNull();
    expect(unknown.exchange.httpStatus).toBe(404);
    expect(JSON.parse(unknown.exchange.response)).toEqual({ error: 'not_found' });
  });
});

describe('amount rules and transport failures', () => {
  it('.98: the client times out, yet the authorization happened exactly once', async () => {
    const req = request('4242424242424242', { amount: '10.98' });
    const timedOut = await authorize(req, 200);
    expect(timedOut.outcome).toEqual({ kind: 'unknown', reason: expect.stringContaining('timeout') });
    expect(timedOut.exchange).toEqual({ gateway: 'sandbox', httpStatus: 0, response: 'no answer within 200 ms (timeout)' });

    const inquiry = await inquire(req.reference);
    expect(inquiry.outcome).toEqual(approved());
    // A retry with the same reference is a replay: answered at once, not a second authorization.
    const retry = await authorize(req, 500);
    expect(retry.outcome).toEqual(inquiry.outcome);
    expect(sandbox.stats().byReference[req.reference]).toBe(1);
    expect(sandbox.stats().byOrderReference[req.orderReference]).toBe(1);
  });

  it('.98 with a patient client: authorized at once, and the delayed answer tells the same approval', async () => {
    const req = request('4242424242424242', { amount: '1.98' });
    const patient = authorize(req, SLOW_MS + 3_000);
    // While the answer is held back, the processor already knows the authorization.
    const known = await vi.waitFor(
      async () => {
        const { outcome } = await inquire(req.reference);
        expect(outcome).not.toBeNull();
        return outcome;
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(known).toEqual(approved());
    const { outcome, exchange } = await patient;
    expect(outcome).toEqual(known);
    expect(exchange.httpStatus).toBe(200);
    expect(sandbox.stats().byReference[req.reference]).toBe(1);
  });

  it('.97: HTTP 500 is unknown and nothing is authorized', async () => {
    const req = request('4242424242424242', { amount: '5.97' });
    const { outcome, exchange } = await authorize(req);
    expect(outcome).toEqual({ kind: 'unknown', reason: 'processor answered HTTP 500: processor unavailable' });
    expect(exchange).toEqual({ gateway: 'sandbox', httpStatus: 500, response: '{"error":"processor unavailable"}' });
    expect((await inquire(req.reference)).outcome).toBeNull();
    expect(sandbox.stats().byReference[req.reference]).toBeUndefined();
  });

  it('connection refused is unknown with httpStatus 0', async () => {
    const nowhere = createSandboxAdapter({ baseUrl: `http://127.0.0.1:${await freePort()}` });
    const { outcome, exchange } = await nowhere.authorize(request('4242424242424242'), 1_000);
    expect(outcome).toEqual({ kind: 'unknown', reason: expect.stringContaining('ECONNREFUSED') });
    expect(exchange.httpStatus).toBe(0);
    expect(exchange.response).toMatch(/^connection error: ECONNREFUSED/);
    exchanges.push(exchange);
    const inquiry = await nowhere.inquire('att_x', 1_000);
    expect(inquiry.outcome).toMatchObject({ kind: 'unknown' });
    expect((await nowhere.void('sbx_x', 1_000)).outcome).toEqual({ voided: false });
  });

  it('a malformed body is refused with 400 and the answer does not quote it', async () => {
    const response = await fetch(`${sandbox.url}/v1/authorizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"card":{"number":"4242424242424242","cvv":"${CVV}"`,
    });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: 'malformed JSON body' });
    expect(text).not.toContain('4242');

    const invalid = await authorize(request('4242424242424242', { amount: '29.9' }));
    expect(invalid.exchange.httpStatus).toBe(400);
    expect(invalid.outcome).toMatchObject({ kind: 'declined', statusId: 4089 });
  });
});

describe('3-D Secure challenge', () => {
  it('challenge card: the cardholder authenticates, then completion approves with ECI 05', async () => {
    const req = request('4000000000003220', { threeDSecure: true });
    const { outcome, exchange } = await authorize(req);
    const challenge = challengeOf(outcome);
    expect(challenge.challengeUrl).toBe(`${sandbox.url}/challenge/${challenge.processorTransactionId}`);
    expect(JSON.parse(exchange.response)).toMatchObject({ status: 'challenge_required', challengeUrl: challenge.challengeUrl });

    const pageResponse = await fetch(challenge.challengeUrl);
    expect(pageResponse.status).toBe(200);
    expect(pageResponse.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await pageResponse.text();
    expect(html).toContain('Sandbox 3-D Secure challenge');
    expect(html.match(/<button/g)).toHaveLength(2);
    expect(html).toContain('value="authenticate"');
    expect(html).toContain('value="fail"');
    expect(html).not.toContain(req.card.number);

    // Before the cardholder acted: 409, unknown.
    const early = await complete3ds(challenge.processorTransactionId, false);
    expect(early.outcome).toEqual({ kind: 'unknown', reason: 'challenge pending' });
    expect(early.exchange.httpStatus).toBe(409);
    expect(JSON.parse(early.exchange.response)).toEqual({ status: 'challenge_pending' });
    expect((await inquire(req.reference)).outcome).toEqual(challenge);

    const confirmation = await chooseOnChallengePage(challenge.challengeUrl, 'authenticate');
    expect(confirmation.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await confirmation.text()).toContain('Authentication succeeded');

    const completed = await complete3ds(challenge.processorTransactionId, false);
    expect(completed.outcome).toEqual(approved({ eci: '05', processorTransactionId: challenge.processorTransactionId }));
    // Completion is final and idempotent; inquiry and a replayed authorize show it.
    expect((await complete3ds(challenge.processorTransactionId, true)).outcome).toEqual(completed.outcome);
    expect((await inquire(req.reference)).outcome).toEqual(completed.outcome);
    expect((await authorize(req)).outcome).toEqual(completed.outcome);
    expect(sandbox.stats().byReference[req.reference]).toBe(1);
  });

  it('challenge card: the cardholder fails, completion declines 4172 unless proceeding without authentication', async () => {
    const failed = challengeOf((await authorize(request('4000000000003220', { threeDSecure: true }))).outcome);
    await chooseOnChallengePage(failed.challengeUrl, 'fail');
    expect((await complete3ds(failed.processorTransactionId, false)).outcome).toEqual(declined(4172, '3DS Failed'));
  });

  it('fail card: "authenticate" still fails; 4172 without proceeding, ECI 07 when proceeding', async () => {
    const first = challengeOf((await authorize(request('4000000000003063', { threeDSecure: true }))).outcome);
    const answer = await chooseOnChallengePage(first.challengeUrl, 'authenticate', 'json');
    expect(await answer.json()).toEqual({ id: first.processorTransactionId, challenge: 'failed' });
    expect((await complete3ds(first.processorTransactionId, false)).outcome).toEqual(declined(4172, '3DS Failed'));

    const second = challengeOf((await authorize(request('4000000000003063', { threeDSecure: true }))).outcome);
    await chooseOnChallengePage(second.challengeUrl, 'authenticate');
    expect((await complete3ds(second.processorTransactionId, true)).outcome).toEqual(approved({ eci: '07', processorTransactionId: second.processorTransactionId }));
  });

  it('the amount rules hold after a challenge (.12 declined 3512 once authenticated, .35 3635 when proceeding without) and for a rebill of a challenge card', async () => {
    for (const [card, proceed, amount, statusId] of [['4000000000003220', false, '7.12', 3512], ['4000000000003063', true, '7.35', 3635]] as const) {
      const challenge = challengeOf((await authorize(request(card, { threeDSecure: true, amount }))).outcome);
      await chooseOnChallengePage(challenge.challengeUrl, 'authenticate');
      expect((await complete3ds(challenge.processorTransactionId, proceed)).outcome, card).toMatchObject({ kind: 'declined', statusId });
    }
    // A merchant-initiated charge of a challenge card (a rebill) is held to them too, so it can be dunned.
    expect((await authorize(request('4000000000003220', { merchantInitiated: true, amount: '4.12' }))).outcome).toMatchObject({ kind: 'declined', statusId: 3512 });
  });

  it('completing an unknown transaction is a definite decline (4264)', async () => {
    const { outcome, exchange } = await complete3ds(`sbx_${randomUUID()}`, false);
    expect(outcome).toEqual({ kind: 'declined', statusId: 4264, message: 'Transaction Not Found' });
    expect(exchange.httpStatus).toBe(404);
  });
});

describe('void', () => {
  it('voids an approved authorization; inquiry then shows 4166', async () => {
    const req = request('4242424242424242');
    const { outcome } = await authorize(req);
    if (outcome.kind !== 'approved') throw new Error('expected approval');
    const voided = await adapter.void(outcome.processorTransactionId, TIMEOUT);
    exchanges.push(voided.exchange);
    expect(voided.outcome).toEqual({ voided: true });
    expect(JSON.parse(voided.exchange.response)).toEqual({ id: outcome.processorTransactionId, status: 'voided' });
    expect((await adapter.void(outcome.processorTransactionId, TIMEOUT)).outcome).toEqual({ voided: true });
    expect((await inquire(req.reference)).outcome).toEqual(declined(4166, 'Authorized then Voided/Cancelled'));
  });

  it('a decline or an unknown id is not voided', async () => {
    const { outcome } = await authorize(request('4000000000000002'));
    if (outcome.kind !== 'declined') throw new Error('expected decline');
    const notVoidable = await adapter.void(outcome.processorTransactionId!, TIMEOUT);
    expect(notVoidable.outcome).toEqual({ voided: false });
    expect(notVoidable.exchange.httpStatus).toBe(409);
    const unknown = await adapter.void(`sbx_${randomUUID()}`, TIMEOUT);
    expect(unknown.outcome).toEqual({ voided: false });
    expect(unknown.exchange.httpStatus).toBe(404);
  });

  it('voiding a pending challenge cancels it', async () => {
    const req = request('4000000000003220', { threeDSecure: true });
    const challenge = challengeOf((await authorize(req)).outcome);
    expect((await adapter.void(challenge.processorTransactionId, TIMEOUT)).outcome).toEqual({ voided: true });
    expect((await complete3ds(challenge.processorTransactionId, false)).outcome).toEqual(declined(4166, 'Authorized then Voided/Cancelled'));
    const pageResponse = await fetch(challenge.challengeUrl);
    expect(await pageResponse.text()).not.toContain('<button');
  });
});

describe('registry', () => {
  it('finds an adapter by gateway name and names an unknown one', () => {
    const registry = createProcessorRegistry([adapter]);
    expect(registry.get('sandbox')).toBe(adapter);
    expect(() => registry.get('acme-pay')).toThrow('Unknown processor gateway "acme-pay" (configured gateways: "sandbox")');
    expect(() => createProcessorRegistry([adapter, adapter])).toThrow(/registered twice/);
  });
});

describe('card data', () => {
  it('no exchange contains a card number or the CVV', () => {
    expect(exchanges.length).toBeGreaterThan(30);
    for (const exchange of exchanges) {
      for (const number of cardNumbersUsed) expect(exchange.response).not.toContain(number);
      // A CVV's digits may occur inside an id or a random authorization code ("987KRY"), so look for it as a value of
      // its own; and a field named after it (a random authorization code such as "M2CVVA" may spell the word).
      expect(exchange.response).not.toMatch(/"cvv"|\bcvv\s*[:=]/i);
      expect(exchange.response).not.toMatch(new RegExp(`(?<![0-9A-Za-z])${CVV}(?![0-9A-Za-z])`));
    }
  });
});

describe('a sandbox given a state file (the process npm start runs)', () => {
  it('still knows, once restarted, what it authorized, captured and refunded: refunds go on, a reference is not charged again', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'sandbox-ledger-'));
    const stateFile = path.join(directory, 'sandbox', 'ledger.json');
    try {
      const first = await startSandboxProcessor({ stateFile });
      const before = createSandboxAdapter({ baseUrl: first.url });
      const charged = request('4242424242424242', { amount: '40.00' });
      const held = request('4242424242424242', { amount: '15.00', capture: false });
      const approval = (await before.authorize(charged, TIMEOUT)).outcome;
      const hold = (await before.authorize(held, TIMEOUT)).outcome;
      if (approval.kind !== 'approved' || hold.kind !== 'approved') throw new Error('not approved');
      expect((await before.refund({ reference: `re_${randomUUID()}`, processorTransactionId: approval.processorTransactionId, amount: '30.00' }, TIMEOUT)).outcome).toMatchObject({ kind: 'refunded' });
      await first.close();

      const second = await startSandboxProcessor({ stateFile });
      try {
        const after = createSandboxAdapter({ baseUrl: second.url });
        expect((await after.inquire(charged.reference, TIMEOUT)).outcome).toEqual(approval);
        // Sent again under its reference: the same approval, not a second charge.
        expect((await after.authorize(charged, TIMEOUT)).outcome).toEqual(approval);
        expect(second.stats().totalAuthorizations).toBe(2);
        // What is left to refund is what was left before the restart.
        expect((await after.refund({ reference: `re_${randomUUID()}`, processorTransactionId: approval.processorTransactionId, amount: '10.01' }, TIMEOUT)).outcome).toMatchObject({ kind: 'declined' });
        expect((await after.refund({ reference: `re_${randomUUID()}`, processorTransactionId: approval.processorTransactionId, amount: '10.00' }, TIMEOUT)).outcome).toMatchObject({ kind: 'refunded' });
        expect((await after.capture(hold.processorTransactionId, TIMEOUT)).outcome).toMatchObject({ answered: true, captured: true });
      } finally {
        await second.close();
      }
      // Kept whole, never a half-written file beside it.
      expect(readdirSync(path.dirname(stateFile))).toEqual(['ledger.json']);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('keeps a refund whose caller went away before the answer: a sandbox started after a crash still knows it', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'sandbox-ledger-'));
    const stateFile = path.join(directory, 'sandbox', 'ledger.json');
    // Never closed before the check below: closing writes the ledger, which a crashed sandbox cannot do.
    const crashed = await startSandboxProcessor({ stateFile, slowResponseMs: 60_000 });
    try {
      const caller = createSandboxAdapter({ baseUrl: crashed.url });
      const approval = (await caller.authorize(request('4242424242424242', { amount: '40.00' }), TIMEOUT)).outcome;
      if (approval.kind !== 'approved') throw new Error('not approved');
      // Saved first on its own, so the refund is not written along with the approval by chance.
      await vi.waitFor(() => expect(readFileSync(stateFile, 'utf8')).toContain(approval.processorTransactionId), { timeout: 3_000 });
      // `.98` refunds, then answers a minute late: the caller gives up after 300 ms and goes away.
      const refund = { reference: `re_${randomUUID()}`, processorTransactionId: approval.processorTransactionId, amount: '10.98' };
      expect((await caller.refund(refund, 300)).outcome).toMatchObject({ kind: 'unknown' });

      await vi.waitFor(() => expect(readFileSync(stateFile, 'utf8')).toContain(refund.reference), { timeout: 3_000 });
      const restarted = await startSandboxProcessor({ stateFile });
      try {
        const inquiry = await createSandboxAdapter({ baseUrl: restarted.url }).inquireRefund(refund.reference, TIMEOUT);
        expect(inquiry.outcome).toMatchObject({ kind: 'refunded' });
      } finally {
        await restarted.close();
      }
    } finally {
      await crashed.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
