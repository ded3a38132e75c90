import type { Redelivery } from './redelivery.ts';

/** Starts the durable delivery of one stored delivery (or of one of its redeliveries); a port the Temporal adapter implements. */
export interface DeliveryStarter {
  startDelivery(delivery: { deliveryId: string; tenantId: number; endpointId: string; eventType: string; redelivery?: Redelivery }): Promise<void>;
}
