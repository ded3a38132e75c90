import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { startWebhookDeliveries, type DeliverySettings } from '../webhooks/start-deliveries.ts';

const { listUnstartedDeliveries, markDeliveriesSwept } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '5 seconds' },
});

/**
 * How old a delivery never attempted must be before the sweep starts it: well past the longest a gateway takes
 * between recording an event and starting its deliveries (a delivery's first attempt follows its start at once).
 */
const UNSTARTED_AFTER_SECONDS = 10 * 60;
/** Deliveries started per run; the next run (minutes later) takes the rest. */
const BATCH = 200;

/**
 * One sweep (run every few minutes by the `maintenance/unstarted-deliveries` schedule). Workflows start their
 * deliveries durably, but a gateway records some events itself (a lead written after its payment, a subscription
 * cancelled with no billing workflow) and then starts their deliveries: one that could not reach Temporal, or stopped
 * between the two, left them pending, never sent. This starts each under its usual workflow id, which a delivery
 * already started (or done) keeps: nothing is sent twice.
 */
export async function unstartedDeliveriesWorkflow(settings: DeliverySettings): Promise<{ listed: number }> {
  const unstarted = await listUnstartedDeliveries({ olderThanSeconds: UNSTARTED_AFTER_SECONDS, limit: BATCH });
  await startWebhookDeliveries(unstarted, settings);
  // Marked once started (a run that failed to start them lists them again): each delivery is swept once.
  await markDeliveriesSwept({ deliveryIds: unstarted.map((delivery) => delivery.deliveryId), runs: unstarted.map((delivery) => delivery.redelivery?.number ?? 0) });
  return { listed: unstarted.length };
}
