import { randomInt, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NativeConnection, Worker } from '@temporalio/worker';
import { temporalSubscriptionController } from '../adapters/temporal/subscription-controller.ts';
import { connectTemporal, type TemporalHandle } from '../adapters/temporal/connection.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';

let temporal: TemporalHandle;
beforeAll(async () => {
  temporal = await connectTemporal({ address: inject('temporalAddress'), namespace: 'default' });
});
afterAll(() => temporal?.close());

describe('a pause sent while a worker of before the updates runs billing (a deploy under way)', () => {
  it('goes as the signal that worker takes, and is answered as accepted, not refused', async () => {
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const taskQueue = `billing-before-updates-${randomUUID()}`;
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowsPath: fileURLToPath(new URL('./support/workflows/billing-before-updates.workflow.ts', import.meta.url)),
    });
    try {
      await worker.runUntil(async () => {
        const tenantId = randomInt(1_000_000, 2_000_000_000);
        const subscriptionId = randomInt(1, 2_000_000_000);
        const billing = await temporal.client.workflow.start('subscriptionWorkflow', { workflowId: workflowIds.subscription(tenantId, subscriptionId), taskQueue });
        const controller = temporalSubscriptionController({ client: temporal.client, callTimeoutMs: 10_000 });
        expect(await controller.send({ tenantId, subscriptionId, action: 'pause' })).toBe('accepted');
        expect(await billing.result()).toBe('paused');
        // Its billing over, a later action finds none running.
        expect(await controller.send({ tenantId, subscriptionId, action: 'resume' })).toBe('not_running');
      });
    } finally {
      await connection.close();
    }
  }, 60_000);
});
