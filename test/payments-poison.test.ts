import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporalPaymentRunner } from '../adapters/temporal/payment-runner.ts';
import { reserveOrderId } from '../data/queries/orders.ts';
import type { OrderDetails, PaymentWorkflowInput } from '../domain/payments/payment-input.ts';
import type { ValidatedCard } from '../domain/payments/pre-validation.ts';
import type { PaymentRunner } from '../domain/payments/payment-runner.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import { OutcomeAttribute } from '../workflows/contract/search-attributes.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createPaymentTenant, type PaymentTenant } from './support/payments.ts';
import { call } from './support/payments-api.ts';

let app: TestApp;
let tenant: PaymentTenant;
let runner: PaymentRunner;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
  tenant = await createPaymentTenant(app);
  // Well inside the test's own timeout, so a payment that never answers fails the test with a clear error.
  runner = temporalPaymentRunner({ client: app.temporal.client, taskQueue: app.taskQueue, answerTimeoutMs: 30_000 });
});
afterAll(() => app?.close());

/**
 * Starts a payment the way the gateway does, but straight through the Temporal client: the REST edge would
 * refuse such text, a workflow must survive it all the same (another caller, an older gateway, a replay).
 */
async function payWithOrder(order: Partial<OrderDetails>) {
  const submitOrderId = await reserveOrderId(app.orm.em.fork());
  const card: ValidatedCard = { pan: '4242424242424242', cvv: '123', expiryMonth: 12, expiryYear: new Date().getFullYear() + 2, bin: '42424242', last4: '4242', network: 'NetworkA' };
  const email = `poison-${randomUUID().slice(0, 8)}@example.com`;
  const input: PaymentWorkflowInput = {
    tenantId: tenant.id,
    productId: tenant.productId,
    submitOrderId,
    amount: '19.99',
    currency: 'USD',
    email,
    sealedCard: await app.cardVault.seal(card),
    card: { bin: card.bin, last4: card.last4, network: card.network, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, fingerprint: app.cardVault.fingerprint(card.pan) },
    order: { partnerSession: 'poison-test', mobileWalletA: false, ...order },
    cascade: false,
    threeDSecure: { enabled: false, cancelOnFail: true },
    subscriptionPlan: null,
    resultContext: { partnerSession: order.partnerSession ?? 'poison-test', email, amount: '19.99', bin: card.bin, last4: card.last4 },
    settings: {
      processorTimeoutMs: app.config.processorTimeoutMs,
      threeDSecureTimeoutSeconds: app.config.threeDSecureTimeoutSeconds,
      webhookSchedule: app.config.webhookRetrySchedule,
      webhookTimeoutMs: app.config.webhookTimeoutMs,
    },
  };
  const result = await runner.submit(input);
  return { submitOrderId, result, handle: app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, submitOrderId)) };
}

describe('hostile text never breaks a payment workflow', () => {
  it.each([
    ['partnerSession', { partnerSession: 'session\u0000with-nul' }],
    ['campaignName', { campaignName: 'spring\u0000sale' }],
  ])('a NUL byte in %s ends the payment at once as failed, with nothing charged', async (_field, order) => {
    const { submitOrderId, result, handle } = await payWithOrder(order);
    expect(result).toMatchObject({ info: 'Error', statusId: 0, chargeSuccess: false, error: 'The payment could not be processed', submitOrderId });

    // The workflow ended with that answer (not running, not failed), searchable as Failed.
    expect(await handle.result()).toEqual(result);
    const description = await handle.describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.typedSearchAttributes.get(OutcomeAttribute)).toBe('Failed');

    // PostgreSQL's refusal was not retried: one non-retryable failure in the history, no attempt after it.
    const events = (await handle.fetchHistory()).events ?? [];
    const failures = JSON.stringify(events).match(/"DatabaseRefused"/g) ?? [];
    expect(failures).toHaveLength(1);
    expect(JSON.stringify(events)).toContain('"nonRetryable":true');

    expect(await authorizationsFor(submitOrderId)).toBe(0);
    const em = app.orm.em.fork();
    expect(await em.execute(`select id from transactions where order_id = ?`, [submitOrderId])).toEqual([]);
    // Its workflow closed without an order: no such payment (never "started, ask again", which would last forever).
    expect((await call(app, 'GET', `/payments/pay_${submitOrderId}`, tenant.apiKey)).status).toBe(404);
  });
});
