import type { WorkflowBundle } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import type { PaymentAnswerBoard } from '../adapters/temporal/payment-answers.ts';
import { openOrm } from '../data/orm.ts';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import { requireSetting } from '../platform/require-setting.ts';
import { workerFromConfig } from './worker-from-config.ts';

/** Time an authorization local activity may take beyond the processor timeout (as the payment workflow allows it). */
const AUTHORIZATION_MARGIN_MS = 5_000;
/** Time a local answer may take beyond its authorizations (database steps, a busy worker). */
const LOCAL_ANSWER_MARGIN_MS = 5_000;

/**
 * How long a submit waits for its answer in process before asking the `submit` update: an authorization and a
 * cascade's second one, each up to the processor timeout and its margin, and a margin. A payment whose answer waits
 * on an ordinary activity says so at once (`answerComesLater`); this bounds the rest, a workflow task that failed
 * here or a payment this worker let go, which the update then answers.
 */
export const localAnswerWaitMs = (processorTimeoutMs: number) => 2 * (processorTimeoutMs + AUTHORIZATION_MARGIN_MS) + LOCAL_ANSWER_MARGIN_MS;

/**
 * Workflow tasks the hosted worker runs at once unless WORKER_MAX_CONCURRENT_WORKFLOW_TASKS says otherwise. An eager
 * start needs a free one for the payment's whole first task (processor call included), and polls hold some: with the
 * SDK's 40, a gateway at 64 concurrent submits had a sixth of its starts declined, each then costing an update and a
 * trip through matching.
 */
const HOSTED_WORKFLOW_TASK_SLOTS = 200;

/** The configuration a gateway's worker runs with: the worker's own, with the hosted default of workflow task slots. */
export function hostedWorkerConfig(config: Config): Config {
  return { ...config, workerMaxConcurrentWorkflowTasks: config.workerMaxConcurrentWorkflowTasks ?? HOSTED_WORKFLOW_TASK_SLOTS };
}

export interface HostedWorker {
  /** A client on the worker's own connection: workflows it starts with `requestEagerStart` run their first task here. */
  readonly client: Client;
  /** See `localAnswerWaitMs`. */
  readonly localAnswerWaitMs: number;
  /** Drains the worker (its workflow tasks and activities finish), then closes its connection and database pool. */
  stop(): Promise<void>;
}

/**
 * The worker a gateway hosts (GATEWAY_WORKER=on): the product's worker, from the same configuration, polling the
 * same task queue as the worker processes, so a payment's later tasks (3-D Secure completions, captures, rebills)
 * run wherever a worker is free. Its activities have a database pool of their own (DATABASE_POOL_SIZE more
 * connections), so up to 200 payments' steps never starve the gateway's requests, nor those requests the steps.
 * A worker that fails or stops unasked ends the process, as a worker process would end, for its supervisor to
 * restart: a gateway that silently lost its worker would wait out every eager answer.
 */
export async function hostWorker(options: { config: Config; logger: Logger; answerBoard: PaymentAnswerBoard; workflowBundle?: WorkflowBundle }): Promise<HostedWorker> {
  const { logger } = options;
  const config = hostedWorkerConfig(options.config);
  const orm = await openOrm({ databaseUrl: requireSetting(config.databaseUrl, 'DATABASE_URL'), poolSize: config.databasePoolSize });
  const { worker, connection, close } = await workerFromConfig({ ...options, config, orm });
  let stopping = false;
  const running = worker.run().then(
    () => {
      if (stopping) return;
      logger.fatal("the gateway's worker stopped on its own; exiting");
      process.exit(1);
    },
    (error: unknown) => {
      // Failing while asked to stop is the stop's own failure, for its caller.
      if (stopping) throw error;
      logger.fatal({ err: error }, "the gateway's worker failed; exiting");
      process.exit(1);
    },
  );
  logger.info({ taskQueue: config.temporalTaskQueue }, 'gateway worker polling');
  return {
    client: new Client({ connection, namespace: config.temporalNamespace }),
    localAnswerWaitMs: localAnswerWaitMs(config.processorTimeoutMs),
    async stop() {
      stopping = true;
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await close();
      await orm.close();
    },
  };
}
