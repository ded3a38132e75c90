/** A failed delivery sent again on request: its number (1 for the first) and the attempts it already made. */
export interface Redelivery {
  readonly number: number;
  readonly attemptsBefore: number;
}

/** Starts the durable delivery of one stored delivery; a port the Temporal adapter implements. */
export interface DeliveryStarter {
  startDelivery(delivery: { deliveryId: string; tenantId: number; endpointId: string; eventType: string; redelivery?: Redelivery }): Promise<void>;
}
