import { loadConfig, gatewayBaseUrl } from '../platform/config.ts';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardVault, createSecurityCodeKeyWrapper } from '../domain/crypto/card-vault.ts';
import { createSecurityCodeKeyStore } from '../data/security-code-key-store.ts';
import { temporalPaymentRunner } from '../adapters/temporal/payment-runner.ts';
import { temporalRefundRunner } from '../adapters/temporal/refund-runner.ts';
import { temporalSubscriptionController } from '../adapters/temporal/subscription-controller.ts';
import { createLogger } from '../platform/logger.ts';
import { openConnectedOrm, openCounterOrm } from '../data/orm.ts';
import { createReadinessProbes } from './readiness-probes.ts';
import { connectTemporal } from '../adapters/temporal/connection.ts';
import { temporalDeliveryStarter } from '../adapters/temporal/webhook-delivery-starter.ts';
import { temporalEmailDispatcher } from '../adapters/temporal/email-dispatcher.ts';
import { requireSetting } from '../platform/require-setting.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { buildGateway } from './server.ts';
import { openProductCache } from '../services/catalog/product-cache.ts';
import { PaymentAnswerBoard } from '../adapters/temporal/payment-answers.ts';
import { hostWorker } from '../worker/hosted-worker.ts';
import { trackDeliveryStarts } from '../services/webhooks/delivery-starts-in-flight.ts';
import { listenFailure } from './listen-failure.ts';
import { stopWithParent } from '../platform/stop-with-parent.ts';
import { databaseAddress, reachOrExit } from '../platform/unreachable-server.ts';

/** The gateway process: `npm run gateway` (production) or a child of `npm start`. */
const { config, databaseUrl, temporalAddress, dataEncryptionKey } = configOrExit(() => {
  const config = loadConfig();
  return {
    config,
    databaseUrl: requireSetting(config.databaseUrl, 'DATABASE_URL'),
    temporalAddress: requireSetting(config.temporalAddress, 'TEMPORAL_ADDRESS'),
    dataEncryptionKey: requireSetting(config.dataEncryptionKey, 'DATA_ENCRYPTION_KEY'),
  };
});
const logger = createLogger({ level: config.logLevel, name: 'gateway' });
const postgres = { name: 'PostgreSQL', setting: 'DATABASE_URL', address: databaseAddress(databaseUrl) };
const orm = await reachOrExit(logger, postgres, () => openConnectedOrm({ databaseUrl, poolSize: config.databasePoolSize }));
const counterOrm = await openCounterOrm({ databaseUrl, poolSize: config.databaseCounterPoolSize });
const temporal = await reachOrExit(logger, { name: 'Temporal', setting: 'TEMPORAL_ADDRESS', address: temporalAddress }, () =>
  connectTemporal({ address: temporalAddress, namespace: config.temporalNamespace }),
);
const products = await openProductCache({ orm, logger });
const answers = new PaymentAnswerBoard();
// Starts a request does not wait for (a lead's webhook) are waited for by the stop, before Temporal closes.
const deliveryStarts = trackDeliveryStarts(
  temporalDeliveryStarter({
    client: temporal.client,
    taskQueue: config.temporalTaskQueue,
    schedule: config.webhookRetrySchedule,
    attemptTimeoutMs: config.webhookTimeoutMs,
    callTimeoutMs: config.temporalCallTimeoutMs,
  }),
);
// GATEWAY_WORKER=on: payments start eagerly on the worker hosted here and are answered in process.
const hosted = config.gatewayWorker ? await hostWorker({ config, logger, answerBoard: answers }) : undefined;
const app = await buildGateway({
  config,
  orm,
  counterOrm,
  logger,
  secretBox: createSecretBox(dataEncryptionKey),
  cardVault: createCardVault(dataEncryptionKey, createSecurityCodeKeyStore({ orm, keyWrapper: createSecurityCodeKeyWrapper(dataEncryptionKey) })),
  paymentRunner: temporalPaymentRunner({
    client: temporal.client,
    taskQueue: config.temporalTaskQueue,
    answerTimeoutMs: config.submitAnswerTimeoutMs,
    callTimeoutMs: config.temporalCallTimeoutMs,
    ...(hosted ? { inProcess: { client: hosted.client, board: answers, waitMs: hosted.localAnswerWaitMs, atOnce: config.gatewayPaymentsAtOnce, logger } } : {}),
  }),
  refundRunner: temporalRefundRunner({ client: temporal.client, taskQueue: config.temporalTaskQueue, answerTimeoutMs: config.submitAnswerTimeoutMs, callTimeoutMs: config.temporalCallTimeoutMs }),
  subscriptionController: temporalSubscriptionController({ client: temporal.client, callTimeoutMs: config.temporalCallTimeoutMs }),
  deliveryStarter: deliveryStarts,
  emailDispatcher: temporalEmailDispatcher({ client: temporal.client, taskQueue: config.temporalTaskQueue, retrySchedule: config.emailRetrySchedule, callTimeoutMs: config.temporalCallTimeoutMs }),
  readiness: createReadinessProbes({ orm, temporal: temporal.connection, namespace: config.temporalNamespace, taskQueue: config.temporalTaskQueue }),
  productCache: products.cache,
});
try {
  await app.listen({ host: config.host, port: config.port });
} catch (error) {
  // Said in the words of the setting to change, not as a stack trace: `npm start` repeats this line when it gives up.
  logger.error({ err: error }, listenFailure(error, config.host, config.port));
  process.exit(1);
}
logger.info({ url: gatewayBaseUrl(config) }, 'gateway listening');

/**
 * Closing waits for every open connection. Requests in flight finish (a submit may wait for its answer up to
 * SUBMIT_ANSWER_TIMEOUT_MS), new ones get 503; a keep-alive connection whose request finishes after the close began
 * stays open until its keep-alive timeout (72 s), so idle connections are closed every second meanwhile. A request
 * whose client hung up no longer holds a connection but its handler still runs: the pools and Temporal close only
 * once no request is in flight. At the longest answer time (plus a margin) open connections are cut and the wait
 * ends, so a handler still running then may meet closed pools. Webhook starts a request did not wait for end next
 * (each within TEMPORAL_CALL_TIMEOUT_MS); should closing itself hang, the process exits 1 a margin later.
 */
const IDLE_CLOSE_INTERVAL_MS = 1_000;
const SHUTDOWN_MARGIN_MS = 5_000;

// SIGINT and SIGTERM may both arrive (terminal and supervisor): close once.
let closing: Promise<void> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    closing ??= (async () => {
      const closeIdle = setInterval(() => app.server.closeIdleConnections(), IDLE_CLOSE_INTERVAL_MS);
      const deadline = new AbortController();
      const cut = setTimeout(() => {
        app.server.closeAllConnections();
        deadline.abort();
      }, config.submitAnswerTimeoutMs + SHUTDOWN_MARGIN_MS);
      // Past the cut, the webhook starts still in flight have their own deadline (TEMPORAL_CALL_TIMEOUT_MS) to end in.
      setTimeout(() => {
        logger.error('the gateway did not finish closing in time; exiting');
        process.exit(1);
      }, config.submitAnswerTimeoutMs + config.temporalCallTimeoutMs + 2 * SHUTDOWN_MARGIN_MS).unref();
      await app.close();
      await app.requestsInFlight.settled(deadline.signal);
      await deliveryStarts.settled();
      clearInterval(closeIdle);
      clearTimeout(cut);
      await hosted?.stop();
      await products.close();
      await temporal.close();
      await orm.close();
      await counterOrm.close();
      process.exit(0);
    })();
  });
}
stopWithParent();
