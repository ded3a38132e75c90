import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';

/** A delivery starter that knows which of its starts are still under way. */
export interface TrackedDeliveryStarter extends DeliveryStarter {
  /** Resolves once every start begun so far has ended, started or failed (each has its own deadline). */
  settled(): Promise<void>;
}

/**
 * Keeps the starts a request did not wait for (a lead's `customer_lead.paid`, started after its write was answered)
 * until they end, so the gateway's stop closes Temporal only after them. Without it a start in flight at the stop
 * failed with the closed connection, and its webhook waited for the unstarted-deliveries sweep (ten minutes).
 */
export function trackDeliveryStarts(starter: DeliveryStarter): TrackedDeliveryStarter {
  const running = new Set<Promise<void>>();
  return {
    startDelivery(delivery) {
      const start = starter.startDelivery(delivery);
      const ended = start.then(
        () => undefined,
        () => undefined,
      );
      running.add(ended);
      void ended.then(() => running.delete(ended));
      return start;
    },
    async settled() {
      // A start begun while waiting (a request answered meanwhile) is waited for too.
      while (running.size > 0) await Promise.all(running);
    },
  };
}
