import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { NativeConnection, Runtime, Worker, bundleWorkflowCode, type LogLevel, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from '../platform/logger.ts';
import type { Activities } from '../activities/index.ts';
import { paymentAnswerSinks, type PaymentAnswerBoard } from '../adapters/temporal/payment-answers.ts';
import { activityHeartbeats } from './activity-heartbeats.ts';

const require = createRequire(import.meta.url);

/** Bundles the workflow code once (about a second); tests reuse one bundle across workers. */
export function bundleWorkflows(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: require.resolve('../workflows/index.ts'), logger: quietBundlerLogger });
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

let runtimeInstalled = false;

/** Routes the Temporal SDK's own logs (worker state, retries) into the product's pino logger. */
export function installTemporalRuntimeLogger(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };
  // Errors in `meta` are Error objects: give them to pino's `err` serializer so they are not logged as `{}`.
  const log = (level: 'trace' | 'debug' | 'info' | 'warn' | 'error', message: string, meta?: Record<string, unknown>) => {
    const { error, ...rest } = meta ?? {};
    logger[level]({ temporal: rest, ...(error !== undefined ? { err: error } : {}) }, message);
  };
  Runtime.install({
    // Each process stops its workers itself, in its own order (a gateway drains its requests before its worker).
    shutdownSignals: [],
    logger: {
      log: (level, message, meta) => log(levels[level], message, meta),
      trace: (message, meta) => log('trace', message, meta),
      debug: (message, meta) => log('debug', message, meta),
      info: (message, meta) => log('info', message, meta),
      warn: (message, meta) => log('warn', message, meta),
      error: (message, meta) => log('error', message, meta),
    },
  });
}

/**
 * How deep the stack traces made inside workflow code go. The SDK records one for every promise a workflow
 * creates (for the Temporal UI's stack-trace view), mapping each frame through the bundle's source map: with V8's
 * default of 10 frames that was a third of the worker's CPU per payment. V8 gives each new context the limit of
 * its flag, so this sets the flag for the workflow sandboxes created from here on and keeps the limit of the
 * worker's own code (activities' errors and logs keep their 10 frames).
 */
export function limitWorkflowStackTraces(frames: number): void {
  const ownLimit = Error.stackTraceLimit;
  setFlagsFromString(`--stack-trace-limit=${frames}`);
  Error.stackTraceLimit = ownLimit;
}

export async function createWorker(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  logger: Logger;
  workflowBundle?: WorkflowBundle;
  /** See limitWorkflowStackTraces; unset keeps V8's default. */
  workflowStackTraceFrames?: number;
  /** The worker's capacity settings (WORKER_* in the configuration); each unset one keeps the SDK's default. */
  tuning?: WorkerTuning;
  /** Where payments' first answers go when callers in this process wait for them (a gateway hosting the worker). */
  answerBoard?: PaymentAnswerBoard;
}): Promise<{ worker: Worker; connection: NativeConnection }> {
  installTemporalRuntimeLogger(options.logger);
  if (options.workflowStackTraceFrames !== undefined) limitWorkflowStackTraces(options.workflowStackTraceFrames);
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: options.activities,
    workflowBundle: options.workflowBundle ?? (await bundleWorkflows()),
    sinks: paymentAnswerSinks(options.answerBoard),
    interceptors: { activity: [activityHeartbeats] },
    // Heartbeats reach Temporal every 5 s (activityHeartbeats beats a quarter of a 20 s timeout; the SDK would
    // otherwise hold them back to 0.8 of it), so a slow round trip to the server is not taken for a dead worker.
    maxHeartbeatThrottleInterval: '5 seconds',
    ...workerOptionsOf(options.tuning ?? {}),
  });
  return { worker, connection };
}

export interface WorkerTuning {
  readonly maxCachedWorkflows?: number;
  readonly workflowThreads?: number;
  readonly maxConcurrentWorkflowTasks?: number;
  readonly workflowTaskPollers?: number;
}

/** The SDK's options for the settings given; the others are left out, so the SDK's defaults stay. */
function workerOptionsOf(tuning: WorkerTuning) {
  return {
    ...(tuning.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: tuning.maxCachedWorkflows } : {}),
    ...(tuning.workflowThreads !== undefined ? { workflowThreadPoolSize: tuning.workflowThreads } : {}),
    ...(tuning.maxConcurrentWorkflowTasks !== undefined ? { maxConcurrentWorkflowTaskExecutions: tuning.maxConcurrentWorkflowTasks } : {}),
    ...(tuning.workflowTaskPollers !== undefined ? { workflowTaskPollerBehavior: { type: 'simple-maximum' as const, maximum: tuning.workflowTaskPollers } } : {}),
  };
}
