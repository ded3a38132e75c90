import { buildGateway } from '../../api/server.ts';
import { createReadinessProbes } from '../../api/readiness-probes.ts';
import { temporalDeliveryStarter } from '../../adapters/temporal/webhook-delivery-starter.ts';
import { temporalPaymentRunner } from '../../adapters/temporal/payment-runner.ts';
import { temporalRefundRunner } from '../../adapters/temporal/refund-runner.ts';
import { temporalSubscriptionController } from '../../adapters/temporal/subscription-controller.ts';
import type { EmailDispatcher } from '../../domain/email/email-dispatcher.ts';
import type { TestApp } from './harness.ts';

/**
 * A second gateway on a real port, sharing the test app's database, Temporal and task queue, whose e-mail
 * dispatcher is the one given: how a test makes the start of a delivery fail the way an outage would.
 */
export async function startGatewayWith(app: TestApp, emailDispatcher: EmailDispatcher): Promise<{ url: string; close: () => Promise<void> }> {
  const { config, orm, counterOrm, logger, secretBox, cardVault, temporal, taskQueue } = app;
  const gateway = await buildGateway({
    config,
    orm,
    counterOrm,
    logger,
    secretBox,
    cardVault,
    paymentRunner: temporalPaymentRunner({ client: temporal.client, taskQueue, answerTimeoutMs: config.submitAnswerTimeoutMs }),
    refundRunner: temporalRefundRunner({ client: temporal.client, taskQueue, answerTimeoutMs: config.submitAnswerTimeoutMs }),
    subscriptionController: temporalSubscriptionController({ client: temporal.client }),
    deliveryStarter: temporalDeliveryStarter({ client: temporal.client, taskQueue, schedule: config.webhookRetrySchedule, attemptTimeoutMs: config.webhookTimeoutMs }),
    emailDispatcher,
    readiness: createReadinessProbes({ orm, temporal: temporal.connection, namespace: config.temporalNamespace, taskQueue }),
    productCache: app.productCache,
  });
  const url = await gateway.listen({ host: '127.0.0.1', port: 0 });
  return { url, close: () => gateway.close() };
}
