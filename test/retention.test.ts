import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { retentionWorkflow } from '../workflows/maintenance/retention.workflow.ts';
import { ensureRetentionSchedule } from '../worker/maintenance-schedules.ts';
import { startTestApp, type TestApp } from './support/harness.ts';

/**
 * Retention (docs/decisions.md): the hourly `retentionWorkflow` purges submit attempts after 48 hours (or the
 * longest card velocity window plus an hour), idempotency keys after 7 days, ended webhook deliveries 30 days
 * after they ended (never a pending one) and rate-limit windows after an hour. Rows are seeded with past
 * timestamps in a tenant of this file's own; the purge is global, so only these rows are asserted on.
 */

let app: TestApp;
const unique = randomUUID().slice(0, 8);
let tenantId: number;
let productId: number;
let endpointId: string;

const sql = (statement: string, params: unknown[] = []) => app.orm.em.fork().execute<Record<string, any>[]>(statement, params);
const ago = (interval: string) => `now() - interval '${interval}'`;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
  [{ id: tenantId }] = (await sql(
    `insert into tenants (slug, name, client_id, email_tenant_key, created_at, updated_at) values (?, ?, ?, ?, now(), now()) returning id`,
    [`retention-${unique}`, 'Retention', `retention-${unique}`, randomUUID()],
  )) as [{ id: number }];
  const [{ id: applicationId }] = (await sql(
    `insert into applications (tenant_id, slug, name, created_at, updated_at) values (?, 'default', 'Retention', now(), now()) returning id`,
    [tenantId],
  )) as [{ id: number }];
  [{ id: productId }] = (await sql(
    `insert into products (tenant_id, application_id, slug, name, price, currency, created_at, updated_at) values (?, ?, 'p', 'Product', 10, 'USD', now(), now()) returning id`,
    [tenantId, applicationId],
  )) as [{ id: number }];
  endpointId = randomUUID();
  await sql(
    `insert into webhook_endpoints (id, tenant_id, slug, url, secret_ciphertext, created_at, updated_at) values (?, ?, 'e', 'https://example.com', 'x', now(), now())`,
    [endpointId, tenantId],
  );
});

afterAll(async () => {
  // Everything seeded hangs off the tenant (on delete cascade) but the rate-limit windows.
  await sql(`delete from tenants where id = ?`, [tenantId]);
  await sql(`delete from rate_limit_windows where subject like ?`, [`retention-${unique}:%`]);
  await app?.close();
});

async function seedSubmitAttempt(email: string, age: string) {
  await sql(`insert into submit_attempts (tenant_id, product_id, card_fingerprint, email, created_at) values (?, ?, 'f', ?, ${ago(age)})`, [tenantId, productId, email]);
}

async function seedDelivery(id: string, state: string, createdAgo: string, completedAgo: string | null) {
  await sql(
    `insert into webhook_deliveries (id, tenant_id, endpoint_id, event_type, body, state, attempt_count, created_at, completed_at)
     values (?, ?, ?, 'webhook.test', '{}', ?, 1, ${ago(createdAgo)}, ${completedAgo ? ago(completedAgo) : 'null'})`,
    [id, tenantId, endpointId, state],
  );
  await sql(`insert into webhook_attempts (delivery_id, attempt_number, attempted_at, latency_ms) values (?, 1, ${ago(createdAgo)}, 5)`, [id]);
}

const column = async (statement: string, params: unknown[]) => (await sql(statement, params)).map((row) => Object.values(row)[0]);
const submitAttempts = () => column(`select email from submit_attempts where tenant_id = ? order by email`, [tenantId]);
const idempotencyKeys = () => column(`select key from idempotency_keys where tenant_id = ? order by key`, [tenantId]);
const deliveries = () => column(`select id from webhook_deliveries where tenant_id = ? order by id`, [tenantId]);
const attemptsOf = (ids: string[]) => column(`select delivery_id from webhook_attempts where delivery_id = any(?::text[]) order by delivery_id`, [`{${ids.join(',')}}`]);
const windows = () => column(`select subject from rate_limit_windows where subject like ? order by subject`, [`retention-${unique}:%`]);

const runOnce = () =>
  app.temporal.client.workflow.execute<typeof retentionWorkflow>('retentionWorkflow', { taskQueue: app.taskQueue, workflowId: `maintenance/retention/test-${randomUUID()}` });

describe('retention', () => {
  it('a run purges expired rows and keeps fresh and pending ones', async () => {
    await seedSubmitAttempt('old@example.com', '3 days');
    await seedSubmitAttempt('fresh@example.com', '47 hours');
    for (const [key, age] of [['key-old', '8 days'], ['key-fresh', '6 days']]) {
      await sql(`insert into idempotency_keys (tenant_id, key, request_hash, submit_order_id, created_at) values (?, ?, 'h', 1, ${ago(age!)})`, [tenantId, key]);
    }
    await seedDelivery(`old-delivered-${unique}`, 'delivered', '40 days', '31 days');
    await seedDelivery(`old-failed-${unique}`, 'failed', '40 days', '39 days');
    await seedDelivery(`fresh-delivered-${unique}`, 'delivered', '29 days', '29 days');
    await seedDelivery(`old-pending-${unique}`, 'pending', '90 days', null);
    for (const [key, age] of [['action-old', '8 days'], ['action-fresh', '6 days']]) {
      await sql(`insert into action_idempotency_keys (tenant_id, key, action, target, claim, answer, created_at) values (?, ?, 'pause', 'subscription 1', gen_random_uuid(), '{}', ${ago(age!)})`, [tenantId, key]);
    }
    for (const [subject, age] of [['old', '2 hours'], ['fresh', '1 minute']]) {
      await sql(`insert into rate_limit_windows (subject, window_start, request_count) values (?, date_trunc('minute', ${ago(age!)}), 1)`, [`retention-${unique}:${subject}`]);
    }

    const deleted = await runOnce();

    expect(deleted).toMatchObject({ submit_attempts: expect.any(Number), idempotency_keys: expect.any(Number), webhook_deliveries: expect.any(Number) });
    expect(await submitAttempts()).toEqual(['fresh@example.com']);
    expect(await idempotencyKeys()).toEqual(['key-fresh']);
    expect(await column(`select key from action_idempotency_keys where tenant_id = ?`, [tenantId])).toEqual(['action-fresh']);
    const kept = [`fresh-delivered-${unique}`, `old-pending-${unique}`];
    expect(await deliveries()).toEqual(kept);
    expect(await attemptsOf([...kept, `old-delivered-${unique}`, `old-failed-${unique}`])).toEqual(kept);
    expect(await windows()).toEqual([`retention-${unique}:fresh`]);
  });

  it('keeps submit attempts for as long as the longest card velocity window of any product, plus an hour', async () => {
    await sql(`update products set card_submit_window_seconds = ? where id = ?`, [5 * 86_400, productId]);
    await seedSubmitAttempt('within-window@example.com', '4 days');
    await seedSubmitAttempt('past-window@example.com', '6 days');

    await runOnce();
    expect(await submitAttempts()).toContain('within-window@example.com');
    expect(await submitAttempts()).not.toContain('past-window@example.com');

    // The product's window back to the default: the 48 hours apply again.
    await sql(`update products set card_submit_window_seconds = 600 where id = ?`, [productId]);
    await runOnce();
    expect(await submitAttempts()).not.toContain('within-window@example.com');
  });

  it('the schedule is created once, however many workers start, and runs the purge on its task queue', async () => {
    const scheduleId = `maintenance/retention/test-${randomUUID()}`;
    const client = app.temporal.client;
    try {
      await ensureRetentionSchedule(client, { taskQueue: app.taskQueue, scheduleId });
      await ensureRetentionSchedule(client, { taskQueue: app.taskQueue, scheduleId });
      await Promise.all([1, 2, 3].map(() => ensureRetentionSchedule(client, { taskQueue: app.taskQueue, scheduleId })));

      await vi.waitFor(
        async () => {
          const found: string[] = [];
          for await (const schedule of client.schedule.list()) if (schedule.scheduleId === scheduleId) found.push(schedule.scheduleId);
          expect(found).toEqual([scheduleId]);
        },
        { timeout: 10_000, interval: 200 },
      );

      const handle = client.schedule.getHandle(scheduleId);
      const description = await handle.describe();
      expect(description.spec.intervals).toMatchObject([{ every: 3_600_000 }]);
      expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: 'retentionWorkflow', taskQueue: app.taskQueue });

      await handle.trigger();
      const started = await vi.waitFor(
        async () => {
          const [action] = (await handle.describe()).info.recentActions;
          expect(action).toBeDefined();
          return action!.action.workflow;
        },
        { timeout: 10_000, interval: 100 },
      );
      const result = await client.workflow.getHandle(started.workflowId, started.firstExecutionRunId).result();
      expect(result).toHaveProperty('idempotency_keys');
    } finally {
      await client.schedule.getHandle(scheduleId).delete();
    }
  });
});
