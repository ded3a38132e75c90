/** Workflow ids are built from business ids so an engineer finds them in the Temporal UI. */
export const workflowIds = {
  webhookDelivery: (deliveryId: string) => `webhook/${deliveryId}`,
  payment: (tenantId: number, submitOrderId: number) => `payment/tenant-${tenantId}/order-${submitOrderId}`,
};
