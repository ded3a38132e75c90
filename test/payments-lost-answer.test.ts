import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createMerchantTenant, merchantAccount, oneOffProduct, post, submitBody } from './support/payments.ts';
import { call } from './support/payments-api.ts';

/**
 * The sandbox processor behind a front that refuses its first status inquiries (401, as a processor refusing our
 * credentials would), passing everything else through: a lost authorization answer then cannot be asked about at
 * once. What the processor holds is asked directly, past the front.
 */
async function inquiryRefusingFront(target: string, refusals: number) {
  let inquiries = 0;
  const server = http.createServer((request, response) => {
    if (request.method === 'GET' && request.url?.startsWith('/v1/authorizations/') && ++inquiries <= refusals) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      fetch(`${target}${request.url}`, { method: request.method, headers: { 'content-type': 'application/json' }, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined })
        .then(async (answer) => response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()))
        .catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    inquiries: () => inquiries,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let app: TestApp;
let front: Awaited<ReturnType<typeof inquiryRefusingFront>>;

beforeAll(async () => {
  front = await inquiryRefusingFront(inject('sandboxProcessorUrl'), 1);
  app = await startTestApp({ SANDBOX_PROCESSOR_URL: front.url });
  await app.startWorker();
});
afterAll(async () => {
  await app?.close();
  await front?.close();
});

describe('an authorization whose answer was lost while the processor cannot be asked about it', () => {
  it('is asked about again later, never recorded as failed: the sale the processor approved is the payment, and refundable', async () => {
    // .98: the sandbox answers after the 1 s processor timeout, so the answer is lost and the gateway must inquire.
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('slow', '10.98')], merchantAccounts: [merchantAccount('LOST-1')] });
    const idempotency = { 'idempotency-key': `lost-${randomUUID()}` };
    let answer = await post(app, `/api/${tenant.products.slow}`, tenant.apiKey, submitBody('4242424242424242'), idempotency);
    // The caller may meet a 503 ("still being processed") while the inquiry waits; the same key answers once known.
    for (let tries = 0; answer.status === 503 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      answer = await post(app, `/api/${tenant.products.slow}`, tenant.apiKey, submitBody('4242424242424242'), idempotency);
    }
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636 });
    expect(front.inquiries()).toBeGreaterThanOrEqual(2);

    const orderId = answer.body.submitOrderId as number;
    await app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, orderId)).result();
    const [order] = await app.orm.em.fork().execute<{ state: string }[]>(`select state from orders where id = ?`, [orderId]);
    expect(order!.state).toBe('approved');
    const [sale] = await app.orm.em.fork().execute<{ reference: string }[]>(`select reference from transactions where order_id = ? and success`, [orderId]);
    expect(await (await fetch(`${inject('sandboxProcessorUrl')}/v1/authorizations/${sale!.reference}`)).json()).toMatchObject({ status: 'approved' });
    expect((await call(app, 'POST', `/payments/pay_${orderId}/refund`, tenant.apiKey, { amount: 100 })).body).toMatchObject({ status: 'succeeded' });
  });
});
