// The worker bundles this file: every workflow the product runs is exported here.
export { paymentWorkflow } from './payment/payment.workflow.ts';
export { refundWorkflow } from './refund/refund.workflow.ts';
export { subscriptionWorkflow } from './subscription/subscription.workflow.ts';
export { webhookDeliveryWorkflow } from './webhooks/webhook-delivery.workflow.ts';
export { retentionWorkflow } from './maintenance/retention.workflow.ts';
export { unstartedRefundsWorkflow } from './maintenance/unstarted-refunds.workflow.ts';
export { unstartedDeliveriesWorkflow } from './maintenance/unstarted-deliveries.workflow.ts';
export { emailDeliveryWorkflow } from './email/email-delivery.workflow.ts';
export { floorWorkflow } from './floor/floor.workflow.ts';
