import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished, vi } from 'vitest';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createMerchantTenant, createPaymentTenant, merchantAccount, oneOffProduct, post, submitBody, type PaymentTenant } from './support/payments.ts';
import { startHoldingFront } from './support/processor-hold.ts';

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
async function answerChallenge(threeDSecureId: string, outcome: 'authenticate' | 'fail', gateway: TestApp = app) {
  const redirect = await fetch(`${gateway.baseUrl}/3ds/${threeDSecureId}`, { redirect: 'manual' });
  expect(redirect.status).toBe(302);
  const answer = await fetch(redirect.headers.get('location')!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `outcome=${outcome}`,
  });
  expect(answer.ok).toBe(true);
}

/** The completion, asked again (as a checkout page does after each 409) until the processor has the cardholder's answer. */
function completeOnceAnswered(completion: { threeDSecureId: string; partnerSession: string }) {
  return vi.waitFor(
    async () => {
      const answer = await complete(completion);
      expect(answer.status).toBe(200);
      return answer;
    },
    { timeout: 5_000, interval: 250 },
  );
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
    expect(early).toEqual({ status: 409, body: { success: false, message: 'The cardholder had not completed the 3-D Secure challenge when the processor was last asked (at most once a second); send the completion again' } });
    expect(await paymentState(pending.body.submitOrderId)).toEqual(before);
    expect(before.order).toEqual({ state: 'pending_3ds' });

    // A page polling meanwhile: the processor is asked at most once a second, and a completion refused for that leaves
    // nothing in the payment's history (Temporal takes 2,000 updates per run; a poll of each one would use them up).
    const history = app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, pending.body.submitOrderId));
    const eventsBefore = (await history.fetchHistory()).events!.length;
    const polls = await Promise.all(Array.from({ length: 20 }, () => complete({ threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession })));
    expect(polls.map((poll) => poll.status)).toEqual(Array(20).fill(409));
    // Twenty asks would add about a hundred events; a second's pace, one ask at most (the polls may straddle a second).
    // Unpaced, twenty polls add about a hundred; a loaded machine stretches them over several seconds' asks.
    expect((await history.fetchHistory()).events!.length - eventsBefore).toBeLessThan(50);

    await answerChallenge(pending.body.threeDSecureId, 'authenticate');
    // Asked again within the second of the last ask, it is still "not yet": the page asks again, as after any 409.
    const done = await completeOnceAnswered({ threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    expect(done.body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, submitOrderId: pending.body.submitOrderId });
  });

  it('answers a repeat of its submit (the same Idempotency-Key) with the final result once the challenge completed', async () => {
    const body = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const key = { 'idempotency-key': `three-ds-repeat-${Math.random().toString(36).slice(2)}` };
    const pending = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body, key);
    expect(pending.body).toMatchObject({ info: 'Pending' });
    // While the challenge is open, a repeat answers the same Pending (one authorization).
    expect((await post(app, `/api/${tenant.productId}`, tenant.apiKey, body, key)).body).toEqual(pending.body);

    await answerChallenge(pending.body.threeDSecureId, 'authenticate');
    const done = await completeOnceAnswered({ threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    expect(done.body).toMatchObject({ info: 'Success', chargeSuccess: true });
    // A checkout that lost the completion's answer and sends its submit again learns how it ended, not of a dead challenge.
    const repeat = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body, key);
    expect(repeat).toEqual({ status: 200, body: done.body });
    expect(await authorizationsFor(pending.body.submitOrderId)).toBe(1);
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

  it('matches sessions that were given: an empty serviceSession kept with the order matches no empty one', async () => {
    const body = submitBody(CHALLENGE_CARD, { serviceSession: '', threeDSecure: { enabled: true } });
    const pending = await submit(body);
    expect(pending.body.info).toBe('Pending');
    await answerChallenge(pending.body.threeDSecureId, 'authenticate');
    const wrong = await complete({ threeDSecureId: pending.body.threeDSecureId, serviceSession: '', partnerSession: 'someone-else' });
    expect(wrong).toEqual({ status: 400, body: { success: false, message: 'The session does not match the 3-D Secure payment' } });
    const right = await complete({ threeDSecureId: pending.body.threeDSecureId, serviceSession: '', partnerSession: body.partnerSession });
    expect(right.body).toMatchObject({ info: 'Success', chargeSuccess: true });
  });

  it('refuses a completion whose other session contradicts the payment, though one matches', async () => {
    const body = submitBody(CHALLENGE_CARD, { serviceSession: 'ss-own', threeDSecure: { enabled: true } });
    const pending = await submit(body);
    await answerChallenge(pending.body.threeDSecureId, 'authenticate');
    const mismatch = { status: 400, body: { success: false, message: 'The session does not match the 3-D Secure payment' } };
    expect(await complete({ threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession, serviceSession: 'someone-else' })).toEqual(mismatch);
    expect(await complete({ threeDSecureId: pending.body.threeDSecureId, partnerSession: 'someone-else', serviceSession: 'ss-own' })).toEqual(mismatch);
    // Nothing was decided by the refusals: both sessions right, it completes.
    const done = await complete({ threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession, serviceSession: 'ss-own' });
    expect(done.body).toMatchObject({ info: 'Success', chargeSuccess: true });

    // A payment that was issued no serviceSession (its partnerSession kept) has none a completion could name.
    const plain = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const second = await submit(plain);
    await answerChallenge(second.body.threeDSecureId, 'authenticate');
    expect(await complete({ threeDSecureId: second.body.threeDSecureId, partnerSession: plain.partnerSession, serviceSession: 'made-up' })).toEqual(mismatch);
    expect((await complete({ threeDSecureId: second.body.threeDSecureId, partnerSession: plain.partnerSession })).body).toMatchObject({ info: 'Success' });
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

describe("a plan's checkout abandoned at its 3-D Secure challenge", () => {
  const submitToPlan = (body: unknown) => post(app, `/api/${tenant.planProductId}`, tenant.apiKey, body);
  const completeOnPlan = (body: unknown) => post(app, `/api/${tenant.planProductId}/3ds`, tenant.apiKey, body);
  const subscriptionsOf = (email: string) =>
    app.orm.em.fork().execute(`select state from subscriptions where tenant_id = ? and lower(email) = lower(?) order by id`, [tenant.id, email]);

  it('gives way to a new submit of the e-mail with another card: the challenge ends expired, the new card subscribes', async () => {
    const abandoned = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await submitToPlan(abandoned);
    expect(pending.body.info).toBe('Pending');
    expect(await subscriptionsOf(abandoned.email)).toEqual([{ state: 'pending' }]);

    // The same customer, minutes later, another card and another session; the e-mail typed in capitals this time.
    const retry = await submitToPlan(submitBody('4242424242424242', { email: abandoned.email.toUpperCase() }));
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ info: 'Success', subscribeSuccess: true, chargeSuccess: true });
    expect(await subscriptionsOf(abandoned.email)).toEqual([{ state: 'active' }]);

    const first = await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, pending.body.submitOrderId)).result();
    expect(first).toMatchObject({ info: 'Error', statusId: 4172, chargeSuccess: false, subscribeSuccess: false });
    // The challenged attempt's transaction ends as the payment did, not "Submitted" for good.
    expect(await paymentState(pending.body.submitOrderId)).toEqual({ order: { state: 'expired' }, transactions: [{ status_id: 4172, success: false }] });
    const [ended] = await app.orm.em.fork().execute(`select status, completed_at from transactions where order_id = ?`, [pending.body.submitOrderId]);
    expect(ended).toMatchObject({ status: '3DS Failed', completed_at: expect.anything() });
    const late = await completeOnPlan({ threeDSecureId: pending.body.threeDSecureId, partnerSession: abandoned.partnerSession });
    expect(late.status).toBe(410);
    // The merchant's void of the abandoned checkout, arriving after: nothing is held, which is what it asked for.
    const voided = await post(app, `/payments/pay_${pending.body.submitOrderId}/void`, tenant.apiKey, {});
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ status: 'canceled', failure_message: '3DS Failed: the challenge expired', amount_refundable: 0 });
  });

  it('keeps the challenge when the new submit is refused by a velocity limit: its cardholder, who authenticated, completes', async () => {
    // One submit per e-mail for this plan: the waiting checkout's own submit used it.
    const shop = await createMerchantTenant(app, {
      products: [oneOffProduct('plan', '9.99', 'USD', { subscriptionPlan: { recurringAmount: '9.99', intervalDays: 30, gracePeriodDays: 3 }, velocity: { cardSubmitLimit: 100, emailSubmitLimit: 1 } })],
      merchantAccounts: [merchantAccount('VEL-3DS')],
    });
    const onPlan = (path: string, body: unknown) => post(app, `/api/${shop.products.plan}${path}`, shop.apiKey, body);
    const body = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await onPlan('', body);
    expect(pending.body.info).toBe('Pending');
    await answerChallenge(pending.body.threeDSecureId, 'authenticate');

    // Before the checkout completes, the e-mail is submitted again with another card: refused, and nothing else changes.
    const refused = await onPlan('', submitBody('4242424242424242', { email: body.email }));
    expect(refused.body).toMatchObject({ info: 'LimitReached', error: 'Email entered too many times for this product' });
    expect((await paymentState(pending.body.submitOrderId)).order).toEqual({ state: 'pending_3ds' });

    const done = await onPlan('/3ds', { threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    expect(done.body).toMatchObject({ info: 'Success', chargeSuccess: true, subscribeSuccess: true });
    const [subscription] = await app.orm.em.fork().execute(`select state from subscriptions where tenant_id = ? and lower(email) = lower(?)`, [shop.id, body.email]);
    expect(subscription).toEqual({ state: 'active' });
  });

  it('keeps a challenge whose cardholder completed it: the e-mail is subscribed, a new submit is AlreadySubscribed', async () => {
    const body = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await submitToPlan(body);
    await answerChallenge(pending.body.threeDSecureId, 'authenticate');
    const done = await completeOnPlan({ threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    expect(done.body).toMatchObject({ info: 'Success', subscribeSuccess: true });

    const again = await submitToPlan(submitBody('4242424242424242', { email: body.email }));
    expect(again.body).toMatchObject({ info: 'AlreadySubscribed', subscriptionId: 0 });
    expect(await subscriptionsOf(body.email)).toEqual([{ state: 'active' }]);
  });

  it('gives the claim to one of several new submits at once; the others are AlreadySubscribed', async () => {
    const abandoned = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await submitToPlan(abandoned);
    expect(pending.body.info).toBe('Pending');

    const retries = await Promise.all(
      ['4242424242424242', '5555555555554444', '4111111111111111', '4012888888881881'].map((pan) => submitToPlan(submitBody(pan, { email: abandoned.email }))),
    );
    expect(retries.map((retry) => retry.status)).toEqual([200, 200, 200, 200]);
    expect(retries.filter((retry) => retry.body.info === 'Success')).toHaveLength(1);
    expect(retries.filter((retry) => retry.body.info === 'AlreadySubscribed')).toHaveLength(3);
    expect(await subscriptionsOf(abandoned.email)).toEqual([{ state: 'active' }]);
    expect((await paymentState(pending.body.submitOrderId)).order).toEqual({ state: 'expired' });
  });

  it('lets a completion the processor is still answering decide before a new submit of the e-mail: it subscribes, the new submit is AlreadySubscribed', async () => {
    // The processor's answer to the completion is held for seconds: a gateway of its own behind a holding front, with a
    // processor timeout longer than the hold (the suite's 1 s would end the call as timed out, not in flight).
    const front = await startHoldingFront(inject('sandboxProcessorUrl'));
    const gateway = await startTestApp({ SANDBOX_PROCESSOR_URL: front.url, PROCESSOR_TIMEOUT_MS: '30000' }, { hostWorker: true });
    onTestFinished(async () => {
      await gateway.close();
      await front.close();
    });
    await gateway.startWorker();
    const shop = await createPaymentTenant(gateway);
    const body = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await post(gateway, `/api/${shop.planProductId}`, shop.apiKey, body);
    expect(pending.body.info).toBe('Pending');
    await answerChallenge(pending.body.threeDSecureId, 'authenticate', gateway);

    const answer = front.holdNext(/\/3ds-complete$/);
    const completion = post(gateway, `/api/${shop.planProductId}/3ds`, shop.apiKey, { threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    // The processor approved the completion; the gateway does not know yet. Now the customer submits again, another card.
    await answer.arrived;
    const retry = post(gateway, `/api/${shop.planProductId}`, shop.apiKey, submitBody('4242424242424242', { email: body.email }));
    // Released only once the payment took the new submit's supersede: its acceptance is written with the workflow task
    // that ran it, which also ran what the payment does about it (waiting for the completion, or expiring at once).
    const payment = gateway.temporal.client.workflow.getHandle(workflowIds.payment(shop.id, pending.body.submitOrderId));
    await vi.waitFor(
      async () => {
        const events = (await payment.fetchHistory()).events ?? [];
        expect(events.some((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'supersedeChallenge')).toBe(true);
      },
      { timeout: 10_000, interval: 100 },
    );
    // The checkout polls the completion again meanwhile: it waits for the processor call in flight, never told "expired"
    // (the challenge's wait is over, but the call under way decides).
    const polled = post(gateway, `/api/${shop.planProductId}/3ds`, shop.apiKey, { threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    await vi.waitFor(
      async () => {
        const events = (await payment.fetchHistory()).events ?? [];
        expect(events.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'complete3ds')).toHaveLength(2);
      },
      { timeout: 10_000, interval: 100 },
    );
    answer.release();

    const [completed, again, polledAgain] = await Promise.all([completion, retry, polled]);
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ info: 'Success', chargeSuccess: true, subscribeSuccess: true, statusId: 2636, submitOrderId: pending.body.submitOrderId });
    expect(polledAgain.status).toBe(200);
    expect(polledAgain.body).toEqual(completed.body);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ info: 'AlreadySubscribed', subscriptionId: 0 });

    const em = gateway.orm.em.fork();
    const subscriptions = await em.execute(
      `select s.id, s.state, o.parent_order_id from subscriptions s join orders o on o.id = s.order_id where s.tenant_id = ? and lower(s.email) = lower(?)`,
      [shop.id, body.email],
    );
    expect(subscriptions).toEqual([{ id: completed.body.subscriptionId, state: 'active', parent_order_id: pending.body.submitOrderId }]);
    // One charge: the completed one, standing at the processor (not voided by an expiry), and no other card charged.
    const charges = await em.execute<{ order_id: number; reference: string }[]>(`select order_id, reference from transactions where tenant_id = ? and success`, [shop.id]);
    expect(charges).toEqual([{ order_id: pending.body.submitOrderId, reference: expect.any(String) }]);
    expect(await (await fetch(`${inject('sandboxProcessorUrl')}/v1/authorizations/${charges[0]!.reference}`)).json()).toMatchObject({ status: 'approved' });
    expect(await authorizationsFor(pending.body.submitOrderId)).toBe(1);
  });

  it('lets a new submit accepted before a completion decide, even in the same workflow task: the new card subscribes, the completion is told expired', async () => {
    // No worker runs while both arrive, so the payment takes the new submit's take-over and the completion sent after it
    // in one workflow task; the order Temporal accepted them in decides.
    const gateway = await startTestApp({});
    onTestFinished(() => gateway.close());
    const worker = await gateway.startWorker();
    const shop = await createPaymentTenant(gateway);
    const onPlan = (path: string, body: unknown) => post(gateway, `/api/${shop.planProductId}${path}`, shop.apiKey, body);
    const body = submitBody(CHALLENGE_CARD, { threeDSecure: { enabled: true } });
    const pending = await onPlan('', body);
    expect(pending.body.info).toBe('Pending');
    await answerChallenge(pending.body.threeDSecureId, 'authenticate', gateway);
    worker.shutdown();
    await vi.waitFor(() => expect(worker.getState()).toBe('STOPPED'), { timeout: 15_000, interval: 100 });

    const retry = onPlan('', submitBody('4242424242424242', { email: body.email }));
    // The new submit passed its screening (its velocity slot is claimed) and is sending the take-over.
    const em = gateway.orm.em.fork();
    await vi.waitFor(
      async () => expect(await em.execute(`select id from submit_attempts where product_id = ? and lower(email) = lower(?)`, [shop.planProductId, body.email])).toHaveLength(2),
      { timeout: 5_000, interval: 50 },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const completion = onPlan('/3ds', { threeDSecureId: pending.body.threeDSecureId, partnerSession: body.partnerSession });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await gateway.startWorker();

    const [again, completed] = await Promise.all([retry, completion]);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ info: 'Success', chargeSuccess: true, subscribeSuccess: true });
    expect(completed.status).toBe(410);
    const first = await gateway.temporal.client.workflow.getHandle(workflowIds.payment(shop.id, pending.body.submitOrderId)).result();
    expect(first).toMatchObject({ info: 'Error', statusId: 4172, chargeSuccess: false });
    const subscriptions = await em.execute(`select state from subscriptions where tenant_id = ? and lower(email) = lower(?) order by id`, [shop.id, body.email]);
    expect(subscriptions).toEqual([{ state: 'active' }]);
    // The challenged authorization was voided at the processor: only the new card is charged.
    const charges = await em.execute(`select order_id from transactions where tenant_id = ? and success`, [shop.id]);
    expect(charges).toEqual([{ order_id: again.body.submitOrderId }]);
  });
});
