import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createAuthorizationHoldActivities } from '../activities/payments-api/authorization-hold.activities.ts';
import { claimActionKey, findActionKey, releaseActionKey, storeActionAnswer } from '../data/queries/action-idempotency-keys.ts';
import { generateWebhookSecret } from '../domain/crypto/secret-box.ts';
import { temporalPaymentRunner } from '../adapters/temporal/payment-runner.ts';
import type { PaymentRunner } from '../domain/payments/payment-runner.ts';
import { decideAuthorization } from '../services/payments-api/decide-authorization.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { processorsFromConfig } from '../worker/processors-from-config.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import type { MerchantTenant } from './support/payments.ts';
import { merchantAccount, oneOffProduct } from './support/payments.ts';
import { call, createPaymentsApiTenant, paymentBody } from './support/payments-api.ts';
import { startProcessorFront } from './support/processor-front.ts';
import { createTestTenant } from './support/tenants.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';

let app: TestApp;
let tenant: MerchantTenant;

// A held authorization is voided by its durable timer after 3 seconds here (configuration, not the workflow).
beforeAll(async () => {
  app = await startTestApp({ AUTHORIZATION_VOID_AFTER_SECONDS: '3' }, { hostWorker: true });
  await app.startWorker();
  tenant = await createPaymentsApiTenant(app);
});
afterAll(() => app?.close());

const pay = (body: unknown) => call(app, 'POST', '/payments', tenant.apiKey, body);
const post = (path: string, body?: unknown) => call(app, 'POST', path, tenant.apiKey, body);
const get = (path: string) => call(app, 'GET', path, tenant.apiKey);
const transactionsOf = (paymentId: string) =>
  app.orm.em
    .fork()
    .execute<{ id: string; kind: string; success: boolean; refundable: boolean; status_id: number; original_transaction_id: string | null }[]>(
      `select id, kind, success, refundable, status_id, original_transaction_id from transactions where order_id = ? order by sent_at`,
      [Number(paymentId.slice(4))],
    );
/** What a tenant's merchant accounts count as approved volume, in cents, every month and currency together. */
const approvedVolumeOf = async (tenantId: number) => {
  const [row] = await app.orm.em
    .fork()
    .execute<{ cents: string }[]>(
      `select (coalesce(sum(v.approved_amount), 0) * 100)::bigint::text as cents from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.tenant_id = ?`,
      [tenantId],
    );
  return Number(row!.cents);
};

describe('authorization only (capture: false)', () => {
  it('holds the amount, refuses refunds until captured, then captures once', async () => {
    const volumeBefore = await approvedVolumeOf(tenant.id);
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    expect(held.body).toMatchObject({ status: 'requires_capture', status_id: 3367, amount_refundable: 0 });
    const [authorization] = await transactionsOf(held.body.id);
    expect(authorization).toMatchObject({ kind: 'authorization', success: true, refundable: false });
    expect((await post(`/payments/${held.body.id}/refund`, {})).body.error).toMatchObject({ code: 'payment_not_refundable' });

    // A partial capture is not offered: asked for, it is refused, never taken as a capture of the whole amount.
    for (const body of [{ amount_to_capture: 500 }, { amount: 500 }]) {
      const partial = await post(`/payments/${held.body.id}/capture`, body);
      expect(partial.status).toBe(400);
      expect(partial.body.error).toMatchObject({ type: 'invalid_request_error', param: Object.keys(body)[0] });
    }
    expect((await get(`/payments/${held.body.id}`)).body.status).toBe('requires_capture');

    const captured = await post(`/payments/${held.body.id}/capture`);
    expect(captured.status).toBe(200);
    // A charged payment no longer says Preauthorized: the capture's status, as its transaction.updated webhook says.
    expect(captured.body).toMatchObject({ id: held.body.id, status: 'succeeded', amount_refundable: 1999, status_id: 2636 });
    expect((await transactionsOf(held.body.id))[0]).toMatchObject({ refundable: true, status_id: 2636 });
    // Asked again: the payment as it is. A void now is refused and changes nothing.
    expect((await post(`/payments/${held.body.id}/capture`)).body).toMatchObject({ status: 'succeeded' });
    const lateVoid = await post(`/payments/${held.body.id}/void`);
    expect(lateVoid.status).toBe(400);
    expect(lateVoid.body.error).toMatchObject({ type: 'invalid_request_error', code: 'payment_not_authorized' });
    expect((await post(`/payments/${held.body.id}/refund`, { amount: 999 })).body).toMatchObject({ status: 'succeeded' });
    // Captured, the amount counts on its merchant account's monthly cap (a refund gives none of it back).
    expect(await approvedVolumeOf(tenant.id)).toBe(volumeBefore + 1999);
  });

  it('captures once per Idempotency-Key: a repeat answers the capture, a void with the key is 409 and voids nothing', async () => {
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    const key = { 'idempotency-key': `capture-${randomUUID()}` };
    const captured = await call(app, 'POST', `/payments/${held.body.id}/capture`, tenant.apiKey, undefined, key);
    expect(captured.body).toMatchObject({ id: held.body.id, status: 'succeeded' });
    expect(await call(app, 'POST', `/payments/${held.body.id}/capture`, tenant.apiKey, undefined, key)).toEqual(captured);
    const reused = await call(app, 'POST', `/payments/${held.body.id}/void`, tenant.apiKey, undefined, key);
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    expect((await transactionsOf(held.body.id)).map((t) => t.kind)).toEqual(['authorization']);
    // Another tenant's key on this payment: 404, and nothing of it kept (neither its key nor the id it typed).
    const other = await createPaymentsApiTenant(app);
    const foreignKey = `foreign-${randomUUID()}`;
    expect((await call(app, 'POST', `/payments/${held.body.id}/void`, other.apiKey, undefined, { 'idempotency-key': foreignKey })).status).toBe(404);
    expect((await call(app, 'POST', '/payments/4111111111111111/void', other.apiKey, undefined, { 'idempotency-key': foreignKey })).status).toBe(404);
    const kept = await app.orm.em.fork().execute(`select target from action_idempotency_keys where tenant_id = ? or target like '%4111111111111111%'`, [other.id]);
    expect(kept).toEqual([]);
    expect((await get(`/payments/${held.body.id}`)).body.status).toBe('succeeded');
  });

  it('hands an abandoned action key to a retry of the same request only, and the first request then changes nothing of it', async () => {
    const em = app.orm.em.fork();
    const request = { tenantId: tenant.id, key: `taken-over-${randomUUID()}`, action: 'capture', target: 'payment pay_1' };
    const first = await claimActionKey(em, request, 900);
    expect(first).toBeDefined();
    expect(await claimActionKey(em, request, 900)).toBeUndefined();
    // Its process died: fifteen minutes on, a retry of the same request takes the key over; another request never does.
    await em.execute(`update action_idempotency_keys set created_at = now() - interval '16 minutes' where tenant_id = ? and key = ?`, [tenant.id, request.key]);
    expect(await claimActionKey(em, { ...request, action: 'void' }, 900)).toBeUndefined();
    const retry = await claimActionKey(em, request, 900);
    expect(retry).toBeDefined();
    expect(retry).not.toBe(first);
    // The first request, late: neither its answer nor its failure touches the retry's claim.
    await storeActionAnswer(em, request, first!, { late: true });
    await releaseActionKey(em, request, first!);
    expect(await findActionKey(em, tenant.id, request.key)).toMatchObject({ answer: null });
    await storeActionAnswer(em, request, retry!, { status: 'succeeded' });
    expect(await findActionKey(em, tenant.id, request.key)).toMatchObject({ answer: { status: 'succeeded' } });
  });

  it('lets a retry take over a key whose first request died once that request could no longer be running', async () => {
    // The answer timeout (60 s here) bounds a live capture; its claim counts as abandoned 30 s after that, not later.
    const died = async (secondsAgo: number) => {
      const held = await pay(paymentBody('4242424242424242', { capture: false }));
      const key = `died-${randomUUID()}`;
      await app.orm.em.fork().execute(
        `insert into action_idempotency_keys (tenant_id, key, action, target, claim, created_at) values (?, ?, 'capture', ?, ?, now() - make_interval(secs => ?))`,
        [tenant.id, key, `payment ${held.body.id}`, randomUUID(), secondsAgo],
      );
      return { held, answer: await call(app, 'POST', `/payments/${held.body.id}/capture`, tenant.apiKey, undefined, { 'Idempotency-Key': key }) };
    };
    const young = await died(60);
    expect(young.answer.body.error).toMatchObject({ code: 'idempotency_key_in_use' });
    // Decided without the key, so its hold period's void does not land in the tests after this one.
    expect((await post(`/payments/${young.held.body.id}/capture`)).body).toMatchObject({ status: 'succeeded' });
    expect((await died(91)).answer.body).toMatchObject({ status: 'succeeded' });
  });

  it('voids on request: a void transaction refers to the authorization, and a capture is then refused', async () => {
    const volumeBefore = await approvedVolumeOf(tenant.id);
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    expect(await approvedVolumeOf(tenant.id)).toBe(volumeBefore + 1999);
    const voided = await post(`/payments/${held.body.id}/void`);
    expect(voided.body).toMatchObject({ status: 'canceled', failure_message: 'The authorization was voided before capture', amount_refundable: 0 });
    const [authorization, voidRow] = await transactionsOf(held.body.id);
    expect(voidRow).toMatchObject({ kind: 'void', success: true, status_id: 4166, original_transaction_id: authorization!.id });
    expect((await post(`/payments/${held.body.id}/capture`)).status).toBe(400);
    // Nothing was charged: the amount no longer takes room on its merchant account's monthly cap.
    expect(await approvedVolumeOf(tenant.id)).toBe(volumeBefore);
  });

  it('voids an authorization nobody captures when its hold period ends (durable timer)', async () => {
    const volumeBefore = await approvedVolumeOf(tenant.id);
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    await vi.waitFor(async () => expect((await get(`/payments/${held.body.id}`)).body.status).toBe('canceled'), { timeout: 15_000, interval: 250 });
    const rows = await transactionsOf(held.body.id);
    expect(rows.map((row) => row.kind)).toEqual(['authorization', 'void']);
    expect(await approvedVolumeOf(tenant.id)).toBe(volumeBefore);
    expect((await post(`/payments/${held.body.id}/capture`)).status).toBe(400);
  });

  it('decides a held authorization once when captures and voids race', async () => {
    const held = await pay(paymentBody('4242424242424242', { capture: false }));
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(`/payments/${held.body.id}/${i % 2 === 0 ? 'capture' : 'void'}`)));
    const decided = answers.filter((answer) => answer.status === 200).map((answer) => answer.body.status);
    expect(new Set(decided).size).toBe(1);
    const final = (await get(`/payments/${held.body.id}`)).body.status;
    expect(decided[0]).toBe(final);
    for (const answer of answers.filter((a) => a.status !== 200)) expect(answer.body.error.code).toBe('payment_not_authorized');
    const kinds = (await transactionsOf(held.body.id)).map((row) => row.kind);
    expect(kinds).toEqual(final === 'canceled' ? ['authorization', 'void'] : ['authorization']);
  });

  it('answers a repeat that finds the decision already made and its payment closed with the payment, decided (never "being decided")', async () => {
    // Many repeats at once: each that reaches the payment after it closed is refused by Temporal, and answers from the record.
    const busy = await createPaymentsApiTenant(app, { rateLimitPerMinute: 1_000 });
    const held = await Promise.all(Array.from({ length: 3 }, () => call(app, 'POST', '/payments', busy.apiKey, paymentBody('4242424242424242', { capture: false }))));
    const answers = await Promise.all(held.flatMap((payment) => Array.from({ length: 12 }, () => call(app, 'POST', `/payments/${payment.body.id}/capture`, busy.apiKey))));
    expect(answers.map((answer) => [answer.status, answer.body.status])).toEqual(answers.map(() => [200, 'succeeded']));

    // Deterministically: the first request's decision finishes, and its payment closes, between this request's read
    // of the payment (authorized) and its own ask.
    const payment = await pay(paymentBody('4242424242424242', { capture: false }));
    const runner = temporalPaymentRunner({ client: app.temporal.client, taskQueue: app.taskQueue, answerTimeoutMs: 10_000 });
    const orderId = Number(payment.body.id.slice('pay_'.length));
    const decidedMeanwhile: Pick<PaymentRunner, 'decideAuthorization'> = {
      async decideAuthorization(input) {
        expect(await runner.decideAuthorization(input)).toMatchObject({ kind: 'decided', state: 'approved' });
        await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, orderId)).result();
        return runner.decideAuthorization(input);
      },
    };
    const repeat = decideAuthorization({ em: app.orm.em.fork(), runner: decidedMeanwhile }, { tenantId: tenant.id, paymentId: payment.body.id, decision: 'capture' });
    await expect(repeat).resolves.toBe(orderId);
    // The other decision, asked so, is refused as what the payment now is.
    const voidAfter = decideAuthorization({ em: app.orm.em.fork(), runner }, { tenantId: tenant.id, paymentId: payment.body.id, decision: 'void' });
    await expect(voidAfter).rejects.toMatchObject({ code: 'payment_not_authorized', message: expect.stringContaining('has no authorization waiting') });
  });

  it('changes nothing with a late record of how a hold ended once it was decided (a run of the step that outlived its time limit)', async () => {
    const { endHeldAuthorization } = createAuthorizationHoldActivities({ orm: app.orm, logger: app.logger, processors: processorsFromConfig(app.config) });
    const authorizationOf = async (paymentId: string) => (await transactionsOf(paymentId)).find((row) => row.kind === 'authorization')!;

    // Voided, then a capture's record arrives: the payment stays canceled, and nothing of it can be refunded.
    const voided = await pay(paymentBody('4242424242424242', { capture: false }));
    expect((await post(`/payments/${voided.body.id}/void`)).body.status).toBe('canceled');
    const volumeAfterVoid = await approvedVolumeOf(tenant.id);
    await endHeldAuthorization({ submitOrderId: Number(voided.body.id.slice(4)), transactionId: (await authorizationOf(voided.body.id)).id, end: 'approved', statusId: 2636 });
    expect((await get(`/payments/${voided.body.id}`)).body.status).toBe('canceled');
    expect((await post(`/payments/${voided.body.id}/refund`, {})).body.error).toMatchObject({ code: 'payment_not_refundable' });
    expect(await approvedVolumeOf(tenant.id)).toBe(volumeAfterVoid);

    // Captured, then an expiry's record arrives: the payment stays charged, and its amount still counts on the cap.
    const captured = await pay(paymentBody('4242424242424242', { capture: false }));
    expect((await post(`/payments/${captured.body.id}/capture`)).body.status).toBe('succeeded');
    const volumeAfterCapture = await approvedVolumeOf(tenant.id);
    for (const end of ['expired', 'voided'] as const) {
      await endHeldAuthorization({ submitOrderId: Number(captured.body.id.slice(4)), transactionId: (await authorizationOf(captured.body.id)).id, end });
    }
    expect((await get(`/payments/${captured.body.id}`)).body).toMatchObject({ status: 'succeeded', amount_refundable: 1999 });
    expect(await approvedVolumeOf(tenant.id)).toBe(volumeAfterCapture);
  });

  it.each([
    ['capture', 'succeeded', 1999],
    ['void', 'canceled', 0],
  ] as const)('holds a payment its 3-D Secure challenge approved, charging nothing until the %s decides it', async (decision, status, refundable) => {
    const pending = await pay(paymentBody('4000000000003220', { capture: false, three_d_secure: { enabled: true } }));
    expect(pending.body).toMatchObject({ status: 'requires_action' });
    // The cardholder answers the challenge; the checkout completes it.
    const redirect = await fetch(pending.body.next_action.redirect_url, { redirect: 'manual' });
    const answered = await fetch(redirect.headers.get('location')!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'outcome=authenticate' });
    expect(answered.ok).toBe(true);
    const completion = { threeDSecureId: pending.body.next_action.three_d_secure_id, serviceSession: pending.body.id };
    const completed = await call(app, 'POST', `/api/${tenant.products['payments-api']}/3ds`, tenant.apiKey, completion);
    expect(completed.body).toMatchObject({ info: 'Success', chargeSuccess: false });

    // Authorized, not charged: waiting for its capture, as one held from its first answer.
    expect((await get(`/payments/${pending.body.id}`)).body).toMatchObject({ status: 'requires_capture', status_id: 3367, amount_refundable: 0 });
    expect((await transactionsOf(pending.body.id))[0]).toMatchObject({ kind: 'authorization', success: true, refundable: false, status_id: 3367 });

    const decided = await post(`/payments/${pending.body.id}/${decision}`);
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ status, amount_refundable: refundable });
    expect((await get(`/payments/${pending.body.id}`)).body).toMatchObject({ status, amount_refundable: refundable });
    if (decision === 'capture') expect((await post(`/payments/${pending.body.id}/refund`, { amount: 999 })).body).toMatchObject({ status: 'succeeded' });
  });

  it('voids a payment waiting on its 3-D Secure challenge: canceled at once, nothing charged, the challenge closed', async () => {
    const pending = await pay(paymentBody('4000000000003220', { three_d_secure: { enabled: true } }));
    expect(pending.body).toMatchObject({ status: 'requires_action' });
    // Nothing to capture before the cardholder has authenticated.
    const capture = await post(`/payments/${pending.body.id}/capture`);
    expect(capture.status).toBe(400);
    expect(capture.body.error).toMatchObject({ code: 'payment_not_authorized', message: `Payment ${pending.body.id} is waiting on its 3-D Secure challenge; it cannot be captured` });

    // Eight voids at once (a checkout's cancel button pressed again and again): each answers the payment canceled.
    const voids = await Promise.all(Array.from({ length: 8 }, () => post(`/payments/${pending.body.id}/void`)));
    expect(voids.map((v) => [v.status, v.body.status])).toEqual(Array(8).fill([200, 'canceled']));
    expect((await get(`/payments/${pending.body.id}`)).body).toMatchObject({
      status: 'canceled',
      status_id: 4166,
      amount_refundable: 0,
      failure_message: 'Voided while it waited on its 3-D Secure challenge',
      next_action: null,
    });
    expect(await transactionsOf(pending.body.id)).toMatchObject([{ kind: 'authorization', success: false, refundable: false, status_id: 4166 }]);
    expect(await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, Number(pending.body.id.slice(4)))).result()).toMatchObject({ info: 'Error', chargeSuccess: false, statusId: 4166 });

    // The cardholder's browser arrives late: the challenge is no longer offered, and the checkout's completion is told
    // the payment was voided.
    expect((await fetch(pending.body.next_action.redirect_url, { redirect: 'manual' })).status).toBe(410);
    const completion = await call(app, 'POST', `/api/${tenant.products['payments-api']}/3ds`, tenant.apiKey, { threeDSecureId: pending.body.next_action.three_d_secure_id, serviceSession: pending.body.id });
    expect(completion.status).toBe(410);
    expect(JSON.stringify(completion.body)).toContain('This 3-D Secure payment was voided');
    expect((await get(`/payments/${pending.body.id}`)).body).toMatchObject({ status: 'canceled', amount_refundable: 0 });
    // Voided again: the payment as it is.
    expect((await post(`/payments/${pending.body.id}/void`)).body).toMatchObject({ status: 'canceled' });
  });

  it('answers completions racing voids of an authenticated challenge one way: each told it was voided, or each its result', async () => {
    // A tenant of its own: its twenty-odd requests would spend the shared tenant's rate limit.
    const own = await createPaymentsApiTenant(app);
    const ownPost = (path: string) => call(app, 'POST', path, own.apiKey);
    const pending = await call(app, 'POST', '/payments', own.apiKey, paymentBody('4000000000003220', { three_d_secure: { enabled: true } }));
    const redirect = await fetch(pending.body.next_action.redirect_url, { redirect: 'manual' });
    const answered = await fetch(redirect.headers.get('location')!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'outcome=authenticate' });
    expect(answered.ok).toBe(true);
    const completion = { threeDSecureId: pending.body.next_action.three_d_secure_id, serviceSession: pending.body.id };
    const complete = () => call(app, 'POST', `/api/${own.products['payments-api']}/3ds`, own.apiKey, completion);

    // The checkout's completion and its cancel button, each pressed again and again, at once.
    const [, completions] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, () => ownPost(`/payments/${pending.body.id}/void`))),
      Promise.all(Array.from({ length: 8 }, complete)),
    ]);
    const final = (await call(app, 'GET', `/payments/${pending.body.id}`, own.apiKey)).body;
    expect(['canceled', 'succeeded']).toContain(final.status);
    // Whichever won, every completion (and one sent after) says the same, and never that the session expired.
    const told = [...completions, await complete()].map((answer) => (answer.status === 200 ? [200, answer.body.info, answer.body.statusId] : [answer.status, answer.body.message]));
    expect(told).toEqual(Array(9).fill(final.status === 'canceled' ? [410, 'This 3-D Secure payment was voided'] : [200, 'Success', 2636]));
  });

  it('refuses to capture or void a payment charged at once, and an unknown one', async () => {
    const charged = await pay(paymentBody('4242424242424242'));
    expect(charged.body).toMatchObject({ status: 'succeeded' });
    // Never held: a capture is refused (answering it "succeeded" told the caller a capture took place), as is a void.
    const capture = await post(`/payments/${charged.body.id}/capture`);
    expect(capture.status).toBe(400);
    expect(capture.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'payment_not_authorized',
      param: 'id',
      message: `Payment ${charged.body.id} was captured when it was made (capture: true); it cannot be captured`,
    });
    const voided = await post(`/payments/${charged.body.id}/void`);
    expect(voided.status).toBe(400);
    expect(voided.body.error).toMatchObject({ code: 'payment_not_authorized', message: expect.stringContaining('refund it instead') });
    expect((await get(`/payments/${charged.body.id}`)).body).toMatchObject({ status: 'succeeded', amount_refundable: 1999 });
    expect((await transactionsOf(charged.body.id)).map((t) => t.kind)).toEqual(['authorization']);
    expect((await post('/payments/pay_999999999/capture')).status).toBe(404);
  });
});

/**
 * The processor may refuse a decision: the authorization expired or was voided there (capture answers 409), or it
 * was captured there (void answers 409). Here the sandbox is told directly, as another system of the merchant
 * (or the processor's own expiry) would. The hold must still end, as the processor says, and the tenant hear of it.
 */
describe('a held authorization whose capture or void the processor refuses', () => {
  const secret = generateWebhookSecret();
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let apiKey: string;
  let hookedTenantId: number;
  beforeAll(async () => {
    receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
    const unique = randomUUID().slice(0, 8);
    const hooked = await createTestTenant(app, {
      products: [oneOffProduct('payments-api', '0.00')],
      merchantAccounts: [merchantAccount(`PAR-${unique}`, { monthlyCap: 1_000_000 })],
      webhookEndpoints: [{ slug: 'updates', url: receiver.url, secret, eventTypes: ['transaction.updated'] }],
    });
    apiKey = hooked.apiKey;
    hookedTenantId = hooked.id;
  });
  afterAll(() => receiver?.close());

  const hookedCall = (method: 'GET' | 'POST', path: string, body?: unknown) => call(app, method, path, apiKey, body);
  /** Asks the sandbox processor itself, behind the gateway's back. */
  const atProcessor = async (paymentId: string, action: 'capture' | 'void') => {
    const [row] = await app.orm.em
      .fork()
      .execute<{ gateway_transaction_id: string }[]>(`select gateway_transaction_id from transactions where order_id = ? and kind = 'authorization'`, [Number(paymentId.slice(4))]);
    const response = await fetch(`${inject('sandboxProcessorUrl')}/v1/authorizations/${row!.gateway_transaction_id}/${action}`, { method: 'POST' });
    expect(response.status).toBe(200);
  };
  const updatesOf = (paymentId: string) =>
    receiver.received.map((hook) => hook.payload as { type: string; data: { paymentId: string; change: string; statusId: number } }).filter((hook) => hook.data.paymentId === paymentId);

  it('a capture refused (voided at the processor) answers 402 capture_declined and ends the payment canceled, with transaction.updated', async () => {
    const volumeBefore = await approvedVolumeOf(hookedTenantId);
    const held = await hookedCall('POST', '/payments', paymentBody('4242424242424242', { capture: false }));
    expect(held.body.status).toBe('requires_capture');
    await atProcessor(held.body.id, 'void');

    const refused = await hookedCall('POST', `/payments/${held.body.id}/capture`);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ type: 'card_error', code: 'capture_declined', status_id: 4175 });
    // The status the processor ended it with, as its transaction.updated says (not 3367 Preauthorized).
    expect((await hookedCall('GET', `/payments/${held.body.id}`)).body).toMatchObject({ status: 'canceled', amount_refundable: 0, status_id: 4175 });
    expect((await hookedCall('GET', '/payments?status=requires_capture&limit=100')).body.data.map((p: { id: string }) => p.id)).not.toContain(held.body.id);
    await vi.waitFor(() => expect(updatesOf(held.body.id)).toEqual([expect.objectContaining({ type: 'transaction.updated', data: expect.objectContaining({ change: 'voided', statusId: 4175 }) })]), {
      timeout: 15_000,
      interval: 250,
    });
    // Decided for good: a capture asked again is refused as for any payment with nothing held.
    expect((await hookedCall('POST', `/payments/${held.body.id}/capture`)).body.error).toMatchObject({ code: 'payment_not_authorized' });
    // Released at the processor: nothing of it counts on the merchant account's monthly cap.
    expect(await approvedVolumeOf(hookedTenantId)).toBe(volumeBefore);
  });

  it('a void refused (captured at the processor) answers 402 void_declined, and the payment shows the charge as refundable', async () => {
    const held = await hookedCall('POST', '/payments', paymentBody('4242424242424242', { capture: false }));
    await atProcessor(held.body.id, 'capture');

    const refused = await hookedCall('POST', `/payments/${held.body.id}/void`);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ type: 'card_error', code: 'void_declined', status_id: 4175 });
    // The charge shows the processor's capture status, not the refused void's 4175.
    expect((await hookedCall('GET', `/payments/${held.body.id}`)).body).toMatchObject({ status: 'succeeded', amount_refundable: 1999, status_id: 2636 });
    await vi.waitFor(() => expect(updatesOf(held.body.id)).toEqual([expect.objectContaining({ data: expect.objectContaining({ change: 'captured' }) })]), { timeout: 15_000, interval: 250 });
    expect((await hookedCall('POST', `/payments/${held.body.id}/refund`, { amount: 500 })).body).toMatchObject({ status: 'succeeded' });
  });

  it('the hold-period void refused (captured at the processor) still ends the payment, as the processor says', async () => {
    const held = await hookedCall('POST', '/payments', paymentBody('4242424242424242', { capture: false }));
    await atProcessor(held.body.id, 'capture');
    await vi.waitFor(async () => expect((await hookedCall('GET', `/payments/${held.body.id}`)).body.status).toBe('succeeded'), { timeout: 15_000, interval: 250 });
    const rows = await transactionsOf(held.body.id);
    // The refused void is on record, as the processor answered it.
    expect(rows.map((row) => [row.kind, row.success])).toEqual([
      ['authorization', true],
      ['void', false],
    ]);
  });
});

/**
 * A processor that refuses a void (401 here, as one refusing our credentials for it) and still holds the authorization:
 * nothing can decide it any more, so the hold ends `expired` at once (the processor releases it at the end of its own
 * hold); the void is not sent again and again, the caller left waiting on it for as long as the processor refuses.
 */
describe('a held authorization whose void the processor refuses while it still holds it', () => {
  let refusing: TestApp;
  let front: Awaited<ReturnType<typeof startProcessorFront>>;
  let refusingTenant: MerchantTenant;
  beforeAll(async () => {
    front = await startProcessorFront(inject('sandboxProcessorUrl'), { refusedVoids: true });
    // A hold period far longer than the test: only the void asked for ends the hold.
    refusing = await startTestApp({ SANDBOX_PROCESSOR_URL: front.url, AUTHORIZATION_VOID_AFTER_SECONDS: '3600' }, { hostWorker: true });
    await refusing.startWorker();
    refusingTenant = await createPaymentsApiTenant(refusing);
  });
  afterAll(async () => {
    await refusing?.close();
    await front?.close();
  });

  it('answers 402 void_declined and ends the payment canceled as expired, decided for good', async () => {
    const ask = (method: 'GET' | 'POST', path: string, body?: unknown) => call(refusing, method, path, refusingTenant.apiKey, body);
    const held = await ask('POST', '/payments', paymentBody('4242424242424242', { capture: false }));
    expect(held.body.status).toBe('requires_capture');

    const refused = await ask('POST', `/payments/${held.body.id}/void`);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ type: 'card_error', code: 'void_declined', status_id: 4175 });
    expect((await ask('GET', `/payments/${held.body.id}`)).body).toMatchObject({
      status: 'canceled',
      failure_message: 'The authorization expired at the processor before capture',
      amount_refundable: 0,
    });
    // Nothing waits for a decision any more: a capture asked now is refused and changes nothing.
    expect((await ask('POST', `/payments/${held.body.id}/capture`)).body.error).toMatchObject({ code: 'payment_not_authorized' });
    expect((await ask('GET', `/payments/${held.body.id}`)).body.status).toBe('canceled');
  });
});
