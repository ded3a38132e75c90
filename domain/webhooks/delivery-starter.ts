/** Starts the durable delivery of one stored delivery; a port the Temporal adapter implements. */
export interface DeliveryStarter {
  startDelivery(delivery: { deliveryId: string; tenantId: number; endpointId: string; eventType: string }): Promise<void>;
}
