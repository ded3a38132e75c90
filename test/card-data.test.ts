import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import canonicalJson from 'safe-stable-stringify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WorkflowNotFoundError } from '@temporalio/client';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, card, createPaymentTenant, post, submitBody, type PaymentTenant } from './support/payments.ts';
import { startProcessorFront } from './support/processor-front.ts';
import { historyText } from './support/workflow-history.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';

let app: TestApp;
let tenant: PaymentTenant;

beforeAll(async () => {
  app = await startTestApp({}, { hostWorker: true });
  await app.startWorker();
  tenant = await createPaymentTenant(app);
});
afterAll(() => app?.close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Every unkeyed digest a reader of the database could try against a stored request hash. */
function unkeyedDigests(productId: string, body: Record<string, unknown>, pan: string, cvv: string): string[] {
  const texts = [
    canonicalJson([productId, body]),
    JSON.stringify([productId, body]),
    canonicalJson(body),
    JSON.stringify(body),
    JSON.stringify(body.card),
    canonicalJson(body.card),
    pan,
    `${pan}${cvv}`,
    `${pan}|${cvv}`,
  ];
  return texts.map((text) => sha256(text!));
}

describe('idempotency request hashes', () => {
  it('are keyed digests with the card replaced by its fingerprint: no unkeyed digest of the body or the card matches', async () => {
    const pan = '4242424242424242';
    const cvv = '321';
    const body = submitBody(pan, { card: card(pan, { cvv }) });
    const key = `card-hash-${randomUUID()}`;
    const first = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body, { 'idempotency-key': key });
    expect(first.body.info).toBe('Success');

    const [stored] = await app.orm.em.fork().execute<{ request_hash: string }[]>(`select request_hash from idempotency_keys where tenant_id = ? and key = ?`, [tenant.id, key]);
    expect(stored!.request_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(unkeyedDigests(String(tenant.productId), body, pan, cvv)).not.toContain(stored!.request_hash);
    expect(stored!.request_hash).not.toContain(pan);
  });

  it('still recognise the same request with its fields in another order, and tell another card apart', async () => {
    const body = submitBody('4242424242424242');
    const key = `card-hash-order-${randomUUID()}`;
    const first = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body, { 'idempotency-key': key });
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await post(app, `/api/${tenant.productId}`, tenant.apiKey, reordered, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    const otherCard = submitBody('5555555555554444');
    const conflict = await post(app, `/api/${tenant.productId}`, tenant.apiKey, otherCard, { 'idempotency-key': key });
    expect(conflict.status).toBe(409);
  });

  it('answer a repeat from the stored first answer once Temporal no longer has the payment, and never charge again', async () => {
    const body = submitBody('4242424242424242');
    const key = `card-hash-gone-${randomUUID()}`;
    const first = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body, { 'idempotency-key': key });
    expect(first.body.info).toBe('Success');
    const [stored] = await app.orm.em.fork().execute<{ result: unknown }[]>(`select result from idempotency_keys where tenant_id = ? and key = ?`, [tenant.id, key]);
    expect(stored!.result).toEqual(first.body);

    // As after the namespace's retention: the workflow's history is gone.
    const workflowId = `payment/tenant-${tenant.id}/order-${first.body.submitOrderId}`;
    await app.temporal.client.workflow.getHandle(workflowId).result();
    const { runId } = await app.temporal.client.workflow.getHandle(workflowId).describe();
    await app.temporal.connection.workflowService.deleteWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId } });

    const again = await post(app, `/api/${tenant.productId}`, tenant.apiKey, body, { 'idempotency-key': key });
    expect(again.body).toEqual(first.body);
    // Not run again: no new run under the id (the deleted one may still be described while its deletion completes), no
    // second authorization at the processor (the transaction's reference is unique, so counting rows could not tell).
    const after = await app.temporal.client.workflow.getHandle(workflowId).describe().catch((error: unknown) => {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    });
    expect(after?.runId ?? runId).toBe(runId);
    expect(await authorizationsFor(first.body.submitOrderId)).toBe(1);
    const [{ count }] = (await app.orm.em.fork().execute(`select count(*)::int as count from transactions where order_id = ?`, [first.body.submitOrderId])) as [{ count: number }];
    expect(count).toBe(1);
  });
});

describe('what of a card number is shown and stored', () => {
  it('a 13-digit number shows its first 6 and last 4 digits (the first 8 would leave one digit, which Luhn gives away), in the answer, the database and the replay', async () => {
    const pan = '4222222222222';
    const key = `short-card-${randomUUID()}`;
    const first = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody(pan), { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ info: 'Success', bin: '422222', last4: '2222' });
    const rows = await app.orm.em.fork().execute<{ bin: string; last4: string }[]>(`select bin, last4 from transactions where order_id = ?`, [first.body.orderId]);
    expect(rows).toEqual([{ bin: '422222', last4: '2222' }]);
    const again = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody(pan), { 'idempotency-key': key });
    expect(JSON.stringify(again.body)).not.toContain('42222222');
  });

  it('a number of no known network shows nothing of itself in the failure', async () => {
    const answer = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody('712345678908'));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ info: 'Failed', error: 'Invalid CC Number' });
    expect(JSON.stringify(answer.body)).not.toMatch(/7123|8908/);
  });
});

describe('a processor that echoes the card it was sent', () => {
  let echoing: TestApp;
  let echoTenant: PaymentTenant;
  let front: Awaited<ReturnType<typeof startProcessorFront>>;
  let refusing: Awaited<ReturnType<typeof startProcessorFront>>;
  let refusingApp: TestApp;
  let refusingTenant: PaymentTenant;
  beforeAll(async () => {
    front = await startProcessorFront(inject('sandboxProcessorUrl'), { echoCard: 'answer' });
    refusing = await startProcessorFront(inject('sandboxProcessorUrl'), { echoCard: 'refusal' });
    [echoing, refusingApp] = await Promise.all([
      startTestApp({ SANDBOX_PROCESSOR_URL: front.url, LOG_LEVEL: 'debug' }, { hostWorker: true }),
      startTestApp({ SANDBOX_PROCESSOR_URL: refusing.url, LOG_LEVEL: 'debug' }, { hostWorker: true }),
    ]);
    await Promise.all([echoing.startWorker(), refusingApp.startWorker()]);
    [echoTenant, refusingTenant] = await Promise.all([createPaymentTenant(echoing), createPaymentTenant(refusingApp)]);
  });
  afterAll(async () => {
    await Promise.all([echoing?.close(), refusingApp?.close()]);
    await Promise.all([front?.close(), refusing?.close()]);
  });

  /** The card's number and CVV anywhere: the answer, the payment's history, every table, the logs. */
  async function expectNoCardAnywhere(target: TestApp, tenantId: number, answer: Record<string, any>, pan: string, cvv: string) {
    const spaced = pan.replace(/(\d{4})(?=\d)/g, '$1 ');
    const history = await historyText(target.temporal.client.workflow.getHandle(workflowIds.payment(tenantId, answer.submitOrderId)));
    const em = target.orm.em.fork();
    const tables = await em.execute<{ tablename: string }[]>(`select tablename from pg_tables where schemaname = 'public'`);
    const dumps = await Promise.all(tables.map(({ tablename }) => em.execute(`select * from "${tablename}"`).then((rows) => JSON.stringify(rows))));
    for (const [where, text] of [['answer', JSON.stringify(answer)], ['history', history], ['database', dumps.join('\n')], ['logs', target.logs.text()]] as const) {
      expect(text, where).not.toContain(pan);
      expect(text, where).not.toContain(spaced);
      expect(text, where).not.toMatch(new RegExp(`cvv\\D{0,4}${cvv}`, 'i'));
    }
  }

  it('keeps and answers its approval with the card masked; the payment is approved and its ids intact', async () => {
    const pan = '4111111111111111';
    const answer = await post(echoing, `/api/${echoTenant.productId}`, echoTenant.apiKey, submitBody(pan, { card: card(pan, { cvv: '739' }) }));
    expect(answer.body).toMatchObject({ info: 'Success', chargeSuccess: true });
    expect(answer.body.transactionId).toMatch(/^sbx_/);
    expect(answer.body.gatewayResponses[0].response).toContain('411111******1111');
    await echoing.temporal.client.workflow.getHandle(workflowIds.payment(echoTenant.id, answer.body.submitOrderId)).result();
    await expectNoCardAnywhere(echoing, echoTenant.id, answer.body, pan, '739');
  });

  it('keeps and answers its refusal naming the card with the card masked', async () => {
    const pan = '4012888888881881';
    const answer = await post(refusingApp, `/api/${refusingTenant.productId}`, refusingTenant.apiKey, submitBody(pan, { card: card(pan, { cvv: '482' }) }));
    expect(answer.body).toMatchObject({ info: 'Error', statusId: 4089, chargeSuccess: false });
    expect(answer.body.gatewayResponses[0].response).toContain('401288******1881');
    await refusingApp.temporal.client.workflow.getHandle(workflowIds.payment(refusingTenant.id, answer.body.submitOrderId)).result();
    await expectNoCardAnywhere(refusingApp, refusingTenant.id, answer.body, pan, '482');
  });
});

describe('a card number sent where no card goes', () => {
  /** One request as a client sends it, any Host and headers included (fetch would not send a Host of its own). */
  function send(path: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
    const { hostname, port } = new URL(app.baseUrl);
    return new Promise((resolve, reject) => {
      const request = httpRequest({ hostname, port, path, headers }, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
      });
      request.on('error', reject).end();
    });
  }

  it('is masked in every error answer and never written to the log: a path, a query parameter, an id, the Host, a request id', async () => {
    const pans = ['4506604420738536', '4342412427316415', '4914968813837189', '4290007492514670', '4971912209029464', '4266026585421106'];
    const answers = [
      await send(`/payments/${pans[0]}`, { authorization: tenant.apiKey }),
      await send(`/payments/pay_${pans[1]}`, { authorization: tenant.apiKey }),
      await send('/payments/pay_4111_1111_1111_1111', { authorization: tenant.apiKey }),
      await send(`/api/admin/statuses?foo${pans[2]}=1`, tenant.adminHeaders),
      await send('/healthz', { 'x-request-id': pans[3]! }),
      await send('/healthz', { 'x-request-id': '4111.1111.1111.1111' }),
      await send('/healthz', { 'x-request-id': '4111_1111_1111_1111' }),
      await send('/nothing-here', { host: `${pans[4]}.example` }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([404, 404, 404, 400, 200, 200, 200, 404]);
    const graphqlAnswer = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${app.config.operatorToken}` },
      // Refused by its resolver: an answer of status 200 whose error names the application asked for.
      body: JSON.stringify({ query: `mutation { generateLeadKeys(tenantId: ${tenant.id}, application: "shop-${pans[5]}", environment: "test") { publishableKey } }` }),
    });
    expect(graphqlAnswer.status).toBe(200);
    const graphqlText = await graphqlAnswer.text();
    // The answers still say what was refused, as far as a card number may be shown.
    expect(answers[0]!.text).toContain('450660******8536');
    expect(graphqlText).toContain('426602******1106');
    for (const answer of answers.slice(4, 7)) expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    for (const pan of [...pans, '4111.1111.1111.1111', '4111_1111_1111_1111']) {
      for (const answer of [...answers.map((a) => a.text + JSON.stringify(a.headers)), graphqlText]) expect(answer).not.toContain(pan);
      expect(app.logs.text()).not.toContain(pan);
    }
  });
});
