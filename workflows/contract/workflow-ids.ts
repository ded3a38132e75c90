/** Workflow ids are built from business ids so an engineer finds them in the Temporal UI. */
export const workflowIds = {
  webhookDelivery: (deliveryId: string) => `webhook/${deliveryId}`,
  /** The `n`th time a failed delivery is sent again on request. */
  webhookRedelivery: (deliveryId: string, n: number) => `webhook/${deliveryId}/again-${n}`,
  payment: (tenantId: number, submitOrderId: number) => `payment/tenant-${tenantId}/order-${submitOrderId}`,
  email: (tenantId: number, emailId: string) => `email/tenant-${tenantId}/${emailId}`,
  emailBatch: (tenantId: number, batchId: string) => `email-batch/tenant-${tenantId}/${batchId}`,
  refund: (tenantId: number, refundId: string) => `refund/tenant-${tenantId}/${refundId}`,
  subscription: (tenantId: number, subscriptionId: number) => `subscription/tenant-${tenantId}/sub-${subscriptionId}`,
};
