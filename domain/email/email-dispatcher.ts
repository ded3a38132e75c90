/**
 * Starts the durable delivery of e-mails already stored as queued; a port the Temporal adapter implements.
 * Starting twice with the same delivery id is a no-op, so a retried request never sends twice.
 */
export interface EmailDispatcher {
  dispatch(delivery: { readonly deliveryId: string; readonly kind: 'single' | 'batch'; readonly tenantId: number; readonly emailIds: readonly string[] }): Promise<void>;
}
