import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createPaymentTenant, post, submitBody, type PaymentTenant } from './support/payments.ts';

let app: TestApp;
let tenant: PaymentTenant;

beforeAll(async () => {
  app = await startTestApp({}, { hostWorker: true });
  await app.startWorker();
  tenant = await createPaymentTenant(app);
});
afterAll(() => app?.close());

const CHALLENGE_CARD = '4000000000003220';
const submit = (body: unknown) => post(app, `/api/${tenant.productId}`, tenant.apiKey, body);
const complete = (body: unknown) => post(app, `/api/${tenant.productId}/3ds`, tenant.apiKey, body);

/** Plays the cardholder: follows the gateway's redirect to the challenge page and answers it. */
async function answerChallenge(threeDSecureId: string, outcome: 'authenticate' | 'fail') {
  const redirect = await fetch(`${app.baseUrl}/3ds/${threeDSecureId}`, { redirect: 'manual' });
  expect(redirect.status).toBe(302);
  const answer = await fetch(redirect.headers.get('location')!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `outcome=${outcome}`,
  });
  expect(answer.ok).toBe(true);
}

async function paymentState(submitOrderId: number) {
  const em = app.orm.em.fork();
  const [order] = await em.execute(`select state from orders where id = ?`, [submitOrderId]);
  const transactions = await em.execute(`select status_id, success from transactions where order_id = ?`, [submitOrderId]);
  return { order, transactions };
}

describe('3-D Secure completion', () => {
  it('before the cardholder answered the challenge: a prompt 409 that changes nothing; the payment still completes', async () => {
    const body = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await submit(body);
    expect(pending.body).toMatchObject({ info: 'Pending', serviceSession: '' });
    const before = await paymentState(pending.body.submitOrderId);

    const early = await complete({ threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    expect(early).toEqual({ status: 409, body: { success: false, message: 'The cardholder has not completed the 3-D Secure challenge yet' } });
    expect(await paymentState(pending.body.submitOrderId)).toEqual(before);
    expect(before.order).toEqual({ state: 'pending_3ds' });

    await answerChallenge(pending.body.threeDSecureId, 'authenticate');
    const done = await complete({ threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, submitOrderId: pending.body.submitOrderId });
  });

  it('once finished, answers the same final result every time, concurrently and after the payment closed', async () => {
    const body = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await submit(body);
    await answerChallenge(pending.body.threeDSecureId, 'authenticate');
    const request = { threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession };

    const [first, second] = await Promise.all([complete(request), complete(request)]);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ info: 'Success', chargeSuccess: true });
    expect(second).toEqual(first);

    await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, pending.body.submitOrderId)).result();
    expect(await complete(request)).toEqual(first);
    expect(await authorizationsFor(pending.body.submitOrderId)).toBe(1);
    expect((await paymentState(pending.body.submitOrderId)).transactions).toEqual([{ status_id: 2636, success: true }]);
  });

  it('a failed authentication is a final result too, answered again when asked again', async () => {
    const body = submitBody('4000000000003063', { threeDSecure: { enabled: true, cancelOnFail: true } });
    const pending = await submit(body);
    await answerChallenge(pending.body.threeDSecureId, 'authenticate');
    const request = { threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession };
    const failed = await complete(request);
    expect(failed.body).toMatchObject({ info: 'Error', statusId: 4172, chargeSuccess: false });
    expect(await complete(request)).toEqual(failed);
  });
});

describe('partnerSession longer than the 50 characters an order keeps', () => {
  it("is answered with an issued serviceSession, which completes the challenge (a caller's own is kept)", async () => {
    const partnerSession = `long-${'p'.repeat(75)}`;
    const pending = await submit(submitBody(CHALLENGE_CARD, { partnerSession, threeDSecure: { enabled: true } }));
    expect(pending.body).toMatchObject({ info: 'Pending', partnerSession, serviceSession: expect.stringMatching(/^svc_[0-9a-f]{32}$/) });
    await answerChallenge(pending.body.threeDSecureId, 'authenticate');

    // The only session /3ds can carry back: spec 2.2 caps its partnerSession at 50 characters.
    expect((await complete({ threeDSecureId: pending.body.threeDSecureId, partnerSession: partnerSession.slice(0, 50) })).status).toBe(400);
    const done = await complete({ threeDSecureId: pending.body.threeDSecureId, serviceSession: pending.body.serviceSession });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ info: 'Success', chargeSuccess: true, partnerSession, serviceSession: pending.body.serviceSession });

    const own = await submit(submitBody(CHALLENGE_CARD, { partnerSession, serviceSession: 'svc-from-caller', threeDSecure: { enabled: true } }));
    expect(own.body).toMatchObject({ info: 'Pending', serviceSession: 'svc-from-caller' });
  });
});
