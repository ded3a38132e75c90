import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { findRefund, reserveRefund, withdrawUnstartedRefund } from '../data/queries/refunds.ts';
import type { unstartedRefundsWorkflow } from '../workflows/maintenance/unstarted-refunds.workflow.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import type { MerchantTenant } from './support/payments.ts';
import { call, createPaymentsApiTenant, paymentBody } from './support/payments-api.ts';

/**
 * A gateway that stops between reserving a refund and starting its workflow leaves the refund pending with its
 * amount held; the unstarted-refunds sweep (run every five minutes by its schedule) starts the workflow.
 */
let app: TestApp;
let tenant: MerchantTenant;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
  tenant = await createPaymentsApiTenant(app);
});
afterAll(() => app?.close());

/** An approved payment and a refund of it reserved as the gateway does, its workflow never started. */
async function reservedRefund(): Promise<{ refundId: string; orderId: number }> {
  const payment = await call(app, 'POST', '/payments', tenant.apiKey, paymentBody('4242424242424242'));
  expect(payment.status).toBe(200);
  const orderId = Number((payment.body.id as string).slice(4));
  const reservation = await reserveRefund(app.orm.em.fork(), { tenantId: tenant.id, orderId, idempotencyKey: randomUUID() });
  if (reservation.kind !== 'reserved') throw new Error(`refund not reserved: ${reservation.kind}`);
  return { refundId: reservation.refund.id, orderId };
}

const sweep = () =>
  app.temporal.client.workflow.execute<typeof unstartedRefundsWorkflow>('unstartedRefundsWorkflow', {
    taskQueue: app.taskQueue,
    workflowId: `test-unstarted-refunds-${randomUUID()}`,
    args: [{ processorTimeoutMs: app.config.processorTimeoutMs, webhookSchedule: app.config.webhookRetrySchedule, webhookTimeoutMs: app.config.webhookTimeoutMs }],
  });

const holdsOf = async (orderId: number) =>
  (
    await app.orm.em
      .fork()
      .execute<{ refunded_amount: string; refund_reserved_amount: string }[]>(
        `select refunded_amount, refund_reserved_amount from transactions where order_id = ? and kind = 'authorization' and success`,
        [orderId],
      )
  )[0];

it('refunds what a stopped gateway reserved long ago, once, and leaves a young reservation to its own request', async () => {
  const stalled = await reservedRefund();
  const young = await reservedRefund();
  // Reserved twenty minutes ago: no gateway is still about to start it.
  await app.orm.em.fork().execute(`update refunds set created_at = now() - interval '20 minutes' where id = ?`, [stalled.refundId]);
  expect(await holdsOf(stalled.orderId)).toEqual({ refunded_amount: '0.00', refund_reserved_amount: '19.99' });

  // Sweeps at once (several workers' schedules, or the schedule's own on the shared server): whichever starts the
  // refund, it starts once and is refunded once.
  const sweeps = await Promise.all([sweep(), sweep(), sweep()]);
  const started = sweeps.flatMap((run) => run.started);
  expect(started.filter((id) => id === stalled.refundId).length).toBeLessThanOrEqual(1);
  expect(started).not.toContain(young.refundId);

  await vi.waitFor(async () => expect((await findRefund(app.orm.em.fork(), tenant.id, stalled.refundId))?.state).toBe('succeeded'), { timeout: 30_000 });
  expect(await holdsOf(stalled.orderId)).toEqual({ refunded_amount: '19.99', refund_reserved_amount: '0.00' });
  const refundTransactions = await app.orm.em
    .fork()
    .execute<{ id: string }[]>(`select id from transactions where order_id = ? and kind = 'refund' and success`, [stalled.orderId]);
  expect(refundTransactions).toHaveLength(1);

  // Settled: the next sweep has nothing to start for it.
  expect((await sweep()).started).not.toContain(stalled.refundId);
  expect((await findRefund(app.orm.em.fork(), tenant.id, young.refundId))?.state).toBe('pending');
  expect(await withdrawUnstartedRefund(app.orm.em.fork(), tenant.id, young.refundId)).toBe(true);
}, 90_000);
