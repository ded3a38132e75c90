import { randomBytes, randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Worker, WorkflowBundle } from '@temporalio/worker';
import { createActivities } from '../../activities/index.ts';
import { buildGateway } from '../../api/server.ts';
import { loadConfig, type Config } from '../../platform/config.ts';
import { createSecretBox, type SecretBox } from '../../domain/crypto/secret-box.ts';
import { createCardVault, createSecurityCodeKeyWrapper, type CardVault } from '../../domain/crypto/card-vault.ts';
import { createSecurityCodeKeyStore } from '../../data/security-code-key-store.ts';
import { processorsFromConfig } from '../../worker/processors-from-config.ts';
import { temporalPaymentRunner } from '../../adapters/temporal/payment-runner.ts';
import { temporalRefundRunner } from '../../adapters/temporal/refund-runner.ts';
import { temporalSubscriptionController } from '../../adapters/temporal/subscription-controller.ts';
import { createLogger, type Logger } from '../../platform/logger.ts';
import { openCounterOrm, openOrm, type MikroORM } from '../../data/orm.ts';
import { createReadinessProbes } from '../../api/readiness-probes.ts';
import { connectTemporal, type TemporalHandle } from '../../adapters/temporal/connection.ts';
import { temporalDeliveryStarter } from '../../adapters/temporal/webhook-delivery-starter.ts';
import { temporalEmailDispatcher } from '../../adapters/temporal/email-dispatcher.ts';
import { emailRendererFromConfig, mailerFromConfig } from '../../worker/mailer-from-config.ts';
import { bundleWorkflows, createWorker } from '../../worker/create-worker.ts';
import { openProductCache, type ProductCache } from '../../services/catalog/product-cache.ts';
import { spawnEntry, stopChild } from '../../scripts/child-process.ts';
import { PaymentAnswerBoard } from '../../adapters/temporal/payment-answers.ts';
import { hostWorker } from '../../worker/hosted-worker.ts';

/** Every line the product logged during a test, for assertions (e.g. no PAN, no key). */
export class CapturedLogs {
  readonly lines: string[] = [];
  readonly stream = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      this.lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  text(): string {
    return this.lines.join('\n');
  }
}

export interface TestApp {
  readonly config: Config;
  readonly orm: MikroORM;
  /** The gateway's rate-limit counter pool (asynchronous commit). */
  readonly counterOrm: MikroORM;
  readonly secretBox: SecretBox;
  readonly cardVault: CardVault;
  readonly logs: CapturedLogs;
  readonly logger: Logger;
  readonly temporal: TemporalHandle;
  readonly taskQueue: string;
  readonly gateway: FastifyInstance;
  /** The gateway's product cache: `nextChange` lets a test wait for a product's change notification. */
  readonly productCache: ProductCache;
  /** Base URL of the gateway listening on a real port. */
  readonly baseUrl: string;
  startWorker(): Promise<Worker>;
  /** Environment for running a worker as its own process against this app's servers and task queue. */
  workerProcessEnv(): NodeJS.ProcessEnv;
  /** A real worker process (`worker/main.ts`) on this app's task queue, for tests that kill one; stopped by close(). */
  spawnWorkerProcess(): ChildProcess;
  close(): Promise<void>;
}

let sharedBundle: Promise<WorkflowBundle> | undefined;

/**
 * A gateway on a real port, against the suite's PostgreSQL and Temporal, with its own task queue so
 * files running in parallel never pick up each other's workflows.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: {
    now?: () => Date;
    /**
     * The gateway hosts a worker and starts payments eagerly, answering them in process, as `api/main.ts` does with
     * GATEWAY_WORKER=on (the product's default). Without it the gateway starts payments with Update-With-Start and
     * only `startWorker()`'s workers run them.
     */
    hostWorker?: boolean | { localAnswerWaitMs: number };
  } = {},
): Promise<TestApp> {
  const taskQueue = `test-${randomUUID()}`;
  const config = loadConfig({
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    SANDBOX_PROCESSOR_URL: inject('sandboxProcessorUrl'),
    PROCESSOR_TIMEOUT_MS: '1000',
    DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    OPERATOR_TOKEN: `operator-${randomUUID()}`,
    LOG_LEVEL: 'info',
    PORT: '0',
    ...env,
  });
  const logs = new CapturedLogs();
  const logger = createLogger({ level: config.logLevel, destination: logs.stream });
  const orm = await openOrm({ databaseUrl: config.databaseUrl!, poolSize: 5 });
  const counterOrm = await openCounterOrm({ databaseUrl: config.databaseUrl!, poolSize: 2 });
  const secretBox = createSecretBox(config.dataEncryptionKey!);
  const temporal = await connectTemporal({ address: config.temporalAddress!, namespace: config.temporalNamespace });
  const cardVault = createCardVault(config.dataEncryptionKey!, createSecurityCodeKeyStore({ orm, keyWrapper: createSecurityCodeKeyWrapper(config.dataEncryptionKey!) }));
  const products = await openProductCache({ orm, logger });
  const workers: { worker: Worker; done: Promise<void>; close: () => Promise<void> }[] = [];
  const workerProcesses: ChildProcess[] = [];
  const runWorker = async () => {
    sharedBundle ??= bundleWorkflows();
    const mailer = mailerFromConfig(config);
    const { worker, connection } = await createWorker({
      address: config.temporalAddress!,
      namespace: config.temporalNamespace,
      taskQueue,
      activities: createActivities({ orm, logger, secretBox, cardVault, processors: processorsFromConfig(config), mailer, renderEmail: emailRendererFromConfig() }),
      logger,
      workflowBundle: await sharedBundle,
    });
    workers.push({
      worker,
      done: worker.run(),
      close: async () => {
        mailer.close();
        await connection.close();
      },
    });
    return worker;
  };
  const answers = new PaymentAnswerBoard();
  // The gateway's own worker, built as api/main.ts builds it.
  const hosted = options.hostWorker ? await hostWorker({ config, logger, answerBoard: answers, workflowBundle: await (sharedBundle ??= bundleWorkflows()) }) : undefined;
  const gateway = await buildGateway({
    config,
    orm,
    counterOrm,
    logger,
    secretBox,
    cardVault,
    paymentRunner: temporalPaymentRunner({
      client: temporal.client,
      taskQueue,
      answerTimeoutMs: config.submitAnswerTimeoutMs,
      callTimeoutMs: config.temporalCallTimeoutMs,
      ...(hosted
        ? {
            inProcess: {
              client: hosted.client,
              board: answers,
              waitMs: typeof options.hostWorker === 'object' ? options.hostWorker.localAnswerWaitMs : hosted.localAnswerWaitMs,
              atOnce: config.gatewayPaymentsAtOnce,
              logger,
            },
          }
        : {}),
    }),
    refundRunner: temporalRefundRunner({ client: temporal.client, taskQueue, answerTimeoutMs: config.submitAnswerTimeoutMs, callTimeoutMs: config.temporalCallTimeoutMs }),
    subscriptionController: temporalSubscriptionController({ client: temporal.client, callTimeoutMs: config.temporalCallTimeoutMs }),
    deliveryStarter: temporalDeliveryStarter({ client: temporal.client, taskQueue, schedule: config.webhookRetrySchedule, attemptTimeoutMs: config.webhookTimeoutMs, callTimeoutMs: config.temporalCallTimeoutMs }),
    emailDispatcher: temporalEmailDispatcher({ client: temporal.client, taskQueue, retrySchedule: config.emailRetrySchedule, callTimeoutMs: config.temporalCallTimeoutMs }),
    readiness: createReadinessProbes({ orm, temporal: temporal.connection, namespace: config.temporalNamespace, taskQueue }),
    productCache: products.cache,
    now: options.now,
  });
  const address = await gateway.listen({ host: '127.0.0.1', port: 0 });

  const app: TestApp = {
    config,
    orm,
    counterOrm,
    secretBox,
    cardVault,
    logs,
    logger,
    temporal,
    taskQueue,
    gateway,
    productCache: products.cache,
    baseUrl: address,
    workerProcessEnv() {
      return {
        ...process.env,
        DATABASE_URL: config.databaseUrl,
        TEMPORAL_ADDRESS: config.temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        DATA_ENCRYPTION_KEY: config.dataEncryptionKey!.toString('base64'),
        SANDBOX_PROCESSOR_URL: config.sandboxProcessorUrl,
        ...(config.smtpUrl ? { SMTP_URL: config.smtpUrl } : {}),
        LOG_LEVEL: 'warn',
      };
    },
    async startWorker() {
      return runWorker();
    },
    spawnWorkerProcess() {
      const child = spawnEntry('worker/main.ts', app.workerProcessEnv(), 'pipe');
      workerProcesses.push(child);
      return child;
    },
    async close() {
      for (const child of workerProcesses) await stopChild(child, 1_000);
      for (const { worker, done, close } of workers) {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await done;
        await close();
      }
      await hosted?.stop();
      await gateway.close();
      await products.close();
      await temporal.close();
      await orm.close();
      await counterOrm.close();
    },
  };
  return app;
}
