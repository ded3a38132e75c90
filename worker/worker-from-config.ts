import type { MikroORM } from '@mikro-orm/postgresql';
import type { NativeConnection, Worker, WorkflowBundle } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import type { PaymentAnswerBoard } from '../adapters/temporal/payment-answers.ts';
import { createCardVault, createSecurityCodeKeyWrapper } from '../domain/crypto/card-vault.ts';
import { createSecurityCodeKeyStore } from '../data/security-code-key-store.ts';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import { requireSetting } from '../platform/require-setting.ts';
import { createWorker, type WorkerTuning } from './create-worker.ts';
import { emailRendererFromConfig, mailerFromConfig } from './mailer-from-config.ts';
import { processorsFromConfig } from './processors-from-config.ts';

export interface ConfiguredWorker {
  readonly worker: Worker;
  /** The worker's connection: a client built on it can start workflows eagerly on this worker. */
  readonly connection: NativeConnection;
  /** Releases what the activities hold (the SMTP pool) and the connection; call after the worker stopped. */
  close(): Promise<void>;
}

/**
 * The product's worker as the configuration describes it: every activity with its dependencies (database,
 * processors, card vault, SMTP) and the worker's capacity settings. The worker process runs one; so does a gateway
 * with GATEWAY_WORKER=on, passing the board its eager payments are answered through.
 */
export async function workerFromConfig(options: {
  config: Config;
  orm: MikroORM;
  logger: Logger;
  answerBoard?: PaymentAnswerBoard;
  /** An already bundled workflow code (tests share one); bundled here otherwise. */
  workflowBundle?: WorkflowBundle;
}): Promise<ConfiguredWorker> {
  const { config, orm, logger } = options;
  const dataEncryptionKey = requireSetting(config.dataEncryptionKey, 'DATA_ENCRYPTION_KEY');
  const mailer = mailerFromConfig(config);
  const activities = createActivities({
    orm,
    logger,
    secretBox: createSecretBox(dataEncryptionKey),
    cardVault: createCardVault(dataEncryptionKey, createSecurityCodeKeyStore({ orm, keyWrapper: createSecurityCodeKeyWrapper(dataEncryptionKey) })),
    processors: processorsFromConfig(config),
    mailer,
    renderEmail: emailRendererFromConfig(),
  });
  if (!config.smtpUrl) logger.warn('SMTP_URL is not set: e-mails stay queued until a worker with SMTP_URL runs');
  const { worker, connection } = await createWorker({
    address: requireSetting(config.temporalAddress, 'TEMPORAL_ADDRESS'),
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    activities,
    logger,
    workflowStackTraceFrames: config.workflowStackTraceFrames,
    tuning: workerTuningOf(config),
    ...(options.answerBoard ? { answerBoard: options.answerBoard } : {}),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
  });
  return {
    worker,
    connection,
    async close() {
      mailer.close();
      await connection.close();
    },
  };
}

/** The worker's capacity settings of the configuration (WORKER_*); each unset one keeps the SDK's default. */
export function workerTuningOf(config: Config): WorkerTuning {
  return {
    maxCachedWorkflows: config.workerMaxCachedWorkflows,
    workflowThreads: config.workerWorkflowThreads,
    maxConcurrentWorkflowTasks: config.workerMaxConcurrentWorkflowTasks,
    workflowTaskPollers: config.workerWorkflowTaskPollers,
  };
}
