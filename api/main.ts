import { loadConfig, gatewayBaseUrl } from '../platform/config.ts';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardVault } from '../domain/crypto/card-vault.ts';
import { temporalPaymentRunner } from '../adapters/temporal/payment-runner.ts';
import { temporalRefundRunner } from '../adapters/temporal/refund-runner.ts';
import { temporalSubscriptionController } from '../adapters/temporal/subscription-controller.ts';
import { createLogger } from '../platform/logger.ts';
import { openCounterOrm, openOrm } from '../data/orm.ts';
import { createReadinessProbes } from './readiness-probes.ts';
import { connectTemporal } from '../adapters/temporal/connection.ts';
import { temporalDeliveryStarter } from '../adapters/temporal/webhook-delivery-starter.ts';
import { temporalEmailDispatcher } from '../adapters/temporal/email-dispatcher.ts';
import { requireSetting } from '../platform/require-setting.ts';
import { buildGateway } from './server.ts';
import { openProductCache } from '../services/catalog/product-cache.ts';

/** The gateway process: `npm run gateway` (production) or a child of `npm start`. */
const config = loadConfig();
const logger = createLogger({ level: config.logLevel, name: 'gateway' });
const databaseUrl = requireSetting(config.databaseUrl, 'DATABASE_URL');
const orm = await openOrm({ databaseUrl, poolSize: config.databasePoolSize });
const counterOrm = await openCounterOrm({ databaseUrl, poolSize: config.databaseCounterPoolSize });
const temporal = await connectTemporal({ address: requireSetting(config.temporalAddress, 'TEMPORAL_ADDRESS'), namespace: config.temporalNamespace });
const dataEncryptionKey = requireSetting(config.dataEncryptionKey, 'DATA_ENCRYPTION_KEY');
const products = await openProductCache({ orm, logger });
const app = await buildGateway({
  config,
  orm,
  counterOrm,
  logger,
  secretBox: createSecretBox(dataEncryptionKey),
  cardVault: createCardVault(dataEncryptionKey),
  paymentRunner: temporalPaymentRunner({ client: temporal.client, taskQueue: config.temporalTaskQueue, answerTimeoutMs: config.submitAnswerTimeoutMs }),
  refundRunner: temporalRefundRunner({ client: temporal.client, taskQueue: config.temporalTaskQueue, answerTimeoutMs: config.submitAnswerTimeoutMs }),
  subscriptionController: temporalSubscriptionController({ client: temporal.client }),
  deliveryStarter: temporalDeliveryStarter({
    client: temporal.client,
    taskQueue: config.temporalTaskQueue,
    schedule: config.webhookRetrySchedule,
    attemptTimeoutMs: config.webhookTimeoutMs,
  }),
  emailDispatcher: temporalEmailDispatcher({ client: temporal.client, taskQueue: config.temporalTaskQueue, retrySchedule: config.emailRetrySchedule }),
  readiness: createReadinessProbes({ orm, temporal: temporal.connection, namespace: config.temporalNamespace, taskQueue: config.temporalTaskQueue }),
  productCache: products.cache,
});
await app.listen({ host: config.host, port: config.port });
logger.info({ url: gatewayBaseUrl(config) }, 'gateway listening');

/**
 * How long requests in flight may finish after a stop signal. Closing waits for every open connection, and a
 * keep-alive connection can outlive its last request by the keep-alive timeout (72 s): after the grace, the
 * connections still open are cut so the process exits within a supervisor's stop timeout.
 */
const SHUTDOWN_GRACE_MS = 10_000;

// SIGINT and SIGTERM may both arrive (terminal and supervisor): close once.
let closing: Promise<void> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    closing ??= (async () => {
      const cutConnections = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await app.close();
      clearTimeout(cutConnections);
      await products.close();
      await temporal.close();
      await orm.close();
      await counterOrm.close();
      process.exit(0);
    })();
  });
}
