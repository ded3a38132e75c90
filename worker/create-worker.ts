import { createRequire } from 'node:module';
import { NativeConnection, Runtime, Worker, bundleWorkflowCode, type LogLevel, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from '../infra/logger.ts';
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
  Runtime.install({
    logger: {
      log: (level, message, meta) => logger[levels[level]]({ temporal: meta }, message),
      trace: (message, meta) => logger.trace({ temporal: meta }, message),
      debug: (message, meta) => logger.debug({ temporal: meta }, message),
      info: (message, meta) => logger.info({ temporal: meta }, message),
      warn: (message, meta) => logger.warn({ temporal: meta }, message),
      error: (message, meta) => logger.error({ temporal: meta }, message),
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
