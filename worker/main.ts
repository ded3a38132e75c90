import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { openConnectedOrm } from '../data/orm.ts';
import { requireSetting } from '../platform/require-setting.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { connectTemporal, ensureSearchAttributes } from '../adapters/temporal/connection.ts';
import { workerFromConfig } from './worker-from-config.ts';
import { ensureRetentionSchedule, ensureUnstartedDeliveriesSchedule, ensureUnstartedRefundsSchedule } from './maintenance-schedules.ts';
import { stopWithParent } from '../platform/stop-with-parent.ts';
import { databaseAddress, reachOrExit } from '../platform/unreachable-server.ts';

/** The worker process: `npm run worker` (production) or a child of `npm start`. */
const { config, address, databaseUrl } = configOrExit(() => {
  const config = loadConfig();
  // The encryption key is read when the worker is built, after the schedules; a missing one is told before anything runs.
  requireSetting(config.dataEncryptionKey, 'DATA_ENCRYPTION_KEY');
  return { config, address: requireSetting(config.temporalAddress, 'TEMPORAL_ADDRESS'), databaseUrl: requireSetting(config.databaseUrl, 'DATABASE_URL') };
});
const logger = createLogger({ level: config.logLevel, name: 'worker' });
const orm = await reachOrExit(logger, { name: 'PostgreSQL', setting: 'DATABASE_URL', address: databaseAddress(databaseUrl) }, () =>
  openConnectedOrm({ databaseUrl, poolSize: config.databasePoolSize }),
);

const admin = await reachOrExit(logger, { name: 'Temporal', setting: 'TEMPORAL_ADDRESS', address }, () =>
  connectTemporal({ address, namespace: config.temporalNamespace }),
);
await ensureSearchAttributes(admin.connection, config.temporalNamespace);
await ensureRetentionSchedule(admin.client, { taskQueue: config.temporalTaskQueue });
await ensureUnstartedRefundsSchedule(admin.client, {
  taskQueue: config.temporalTaskQueue,
  settings: { processorTimeoutMs: config.processorTimeoutMs, webhookSchedule: config.webhookRetrySchedule, webhookTimeoutMs: config.webhookTimeoutMs },
});
await ensureUnstartedDeliveriesSchedule(admin.client, {
  taskQueue: config.temporalTaskQueue,
  settings: { schedule: config.webhookRetrySchedule, attemptTimeoutMs: config.webhookTimeoutMs },
});
await admin.close();

const { worker, close } = await workerFromConfig({ config, orm, logger });
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
stopWithParent();
await worker.run();
await close();
await orm.close();
