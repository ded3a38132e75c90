import { randomUUID } from 'node:crypto';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { createFloorActivities } from '../activities/floor/floor.activities.ts';
import type { Activities } from '../activities/index.ts';
import { floorAnswerUpdate } from '../workflows/contract/floor.ts';
import type { floorWorkflow } from '../workflows/floor/floor.workflow.ts';
import { createWorker, type WorkerTuning } from '../worker/create-worker.ts';
import { createLogger } from '../platform/logger.ts';
import { closedLoop } from './closed-loop.ts';
import { cpuPerRequest, snapshotCpu } from './cpu-usage.ts';

/**
 * The floors a submit is measured against (issue 13), each the smallest workflow of a payment's shape:
 * - `Update-With-Start`: started the way a gateway without a worker (GATEWAY_WORKER=off) starts a payment, on the product's task queue, so the
 *   product's own worker process (same settings) runs it; answers after one local activity.
 * - `eager start`: a client sharing an in-process worker's NativeConnection starts it with `requestEagerStart`,
 *   so its first workflow task runs here without a trip through matching (needs the server's
 *   `system.enableEagerWorkflowStart`, which the dev server of scripts/local-stack gets). Its worker has the settings
 *   of the worker a gateway hosts, workflow task slots included: a start that finds no free slot is not eager.
 */
export interface FloorFigures {
  readonly name: string;
  readonly concurrency: number;
  readonly p50: number;
  readonly p99: number;
  readonly perSecond: number;
  readonly errors: number;
  /** CPU ms per workflow of each process group (the bench process hosts the eager floor's worker). */
  readonly cpu: [string, number][];
}

export async function measureFloors(options: {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  durationMs: number;
  concurrency: readonly number[];
  workflowStackTraceFrames: number;
  /** The hosted worker's capacity settings (a gateway's worker runs the eager submits). */
  workerTuning: WorkerTuning;
  /** Names of the bench's processes for the CPU figures. */
  processNames: ReadonlyMap<number, string>;
}): Promise<FloorFigures[]> {
  const figures: FloorFigures[] = [];
  const measure = async (name: string, concurrency: number, iteration: () => Promise<void>): Promise<FloorFigures> => {
    const before = snapshotCpu(options.processNames);
    const run = await closedLoop({ concurrency, durationMs: options.durationMs, iteration });
    return { name, concurrency, ...run, cpu: cpuPerRequest(before, snapshotCpu(options.processNames), run.count) };
  };
  const connection = await Connection.connect({ address: options.temporalAddress });
  const client = new Client({ connection, namespace: options.namespace });
  const updateWithStart = async () => {
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof floorWorkflow>('floorWorkflow', {
      workflowId: `floor/${randomUUID()}`,
      taskQueue: options.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    await client.workflow.executeUpdateWithStart(floorAnswerUpdate, { startWorkflowOperation });
  };
  for (const concurrency of options.concurrency) {
    await closedLoop({ concurrency, durationMs: 1_000, iteration: updateWithStart }); // warm-up
    figures.push(await measure('floor: Update-With-Start', concurrency, updateWithStart));
  }
  await connection.close();

  // A worker made as a gateway makes its own (createWorker, the hosted worker's settings and workflow stack-trace
  // depth), running only the floor's activity; the bundle is the product's.
  const eagerQueue = `${options.taskQueue}-eager-floor`;
  const { worker, connection: nativeConnection } = await createWorker({
    address: options.temporalAddress,
    namespace: options.namespace,
    taskQueue: eagerQueue,
    activities: createFloorActivities() as Partial<Activities> as Activities,
    logger: createLogger({ level: 'warn', name: 'eager-floor' }),
    workflowStackTraceFrames: options.workflowStackTraceFrames,
    tuning: options.workerTuning,
  });
  const running = worker.run();
  const eagerClient = new Client({ connection: nativeConnection, namespace: options.namespace });
  const eagerStart = async () => {
    await eagerClient.workflow.execute<typeof floorWorkflow>('floorWorkflow', { workflowId: `floor-eager/${randomUUID()}`, taskQueue: eagerQueue, requestEagerStart: true });
  };
  for (const concurrency of options.concurrency) {
    await closedLoop({ concurrency, durationMs: 1_000, iteration: eagerStart });
    figures.push(await measure('floor: eager start', concurrency, eagerStart));
  }
  worker.shutdown();
  await running;
  await nativeConnection.close();
  return figures;
}
