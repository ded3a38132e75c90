import { createRequire } from 'node:module';
import { NativeConnection, Runtime, Worker, bundleWorkflowCode, type LogLevel, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from '../platform/logger.ts';
import type { Activities } from '../activities/index.ts';

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

export async function createWorker(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  logger: Logger;
  workflowBundle?: WorkflowBundle;
}): Promise<{ worker: Worker; connection: NativeConnection }> {
  installTemporalRuntimeLogger(options.logger);
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: options.activities,
    workflowBundle: options.workflowBundle ?? (await bundleWorkflows()),
  });
  return { worker, connection };
}
