import { createActivities } from '../activities/index.ts';
import { loadConfig } from '../platform/config.ts';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardVault } from '../domain/crypto/card-vault.ts';
import { processorsFromConfig } from './processors-from-config.ts';
import { emailRendererFromConfig, mailerFromConfig } from './mailer-from-config.ts';
import { createLogger } from '../platform/logger.ts';
import { openOrm } from '../data/orm.ts';
import { requireSetting } from '../platform/require-setting.ts';
import { connectTemporal, ensureSearchAttributes } from '../adapters/temporal/connection.ts';
import { createWorker } from './create-worker.ts';
import { ensureRetentionSchedule, ensureUnstartedRefundsSchedule } from './maintenance-schedules.ts';

/** The worker process: `npm run worker` (production) or a child of `npm start`. */
const config = loadConfig();
const logger = createLogger({ level: config.logLevel, name: 'worker' });
const address = requireSetting(config.temporalAddress, 'TEMPORAL_ADDRESS');
const orm = await openOrm({ databaseUrl: requireSetting(config.databaseUrl, 'DATABASE_URL'), poolSize: config.databasePoolSize });

const admin = await connectTemporal({ address, namespace: config.temporalNamespace });
await ensureSearchAttributes(admin.connection, config.temporalNamespace);
await ensureRetentionSchedule(admin.client, { taskQueue: config.temporalTaskQueue });
await ensureUnstartedRefundsSchedule(admin.client, {
  taskQueue: config.temporalTaskQueue,
  settings: { processorTimeoutMs: config.processorTimeoutMs, webhookSchedule: config.webhookRetrySchedule, webhookTimeoutMs: config.webhookTimeoutMs },
});
await admin.close();

const dataEncryptionKey = requireSetting(config.dataEncryptionKey, 'DATA_ENCRYPTION_KEY');
const mailer = mailerFromConfig(config);
const activities = createActivities({
  orm,
  logger,
  secretBox: createSecretBox(dataEncryptionKey),
  cardVault: createCardVault(dataEncryptionKey),
  processors: processorsFromConfig(config),
  mailer,
  renderEmail: emailRendererFromConfig(),
});
if (!config.smtpUrl) logger.warn('SMTP_URL is not set: e-mails stay queued until a worker with SMTP_URL runs');
const { worker, connection } = await createWorker({
  address,
  namespace: config.temporalNamespace,
  taskQueue: config.temporalTaskQueue,
  activities,
  logger,
  workflowStackTraceFrames: config.workflowStackTraceFrames,
  tuning: {
    maxCachedWorkflows: config.workerMaxCachedWorkflows,
    workflowThreads: config.workerWorkflowThreads,
    maxConcurrentWorkflowTasks: config.workerMaxConcurrentWorkflowTasks,
    workflowTaskPollers: config.workerWorkflowTaskPollers,
  },
});
logger.info({ taskQueue: config.temporalTaskQueue }, 'worker polling');
// A terminal's Ctrl-C and a supervisor's SIGTERM can both arrive: the worker drains once, and later signals wait for it.
let shuttingDown = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (shuttingDown) return;
    shuttingDown = true;
    worker.shutdown();
  });
}
await worker.run();
mailer.close();
await connection.close();
await orm.close();
