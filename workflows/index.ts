// The worker bundles this file: every workflow the product runs is exported here.
export { paymentWorkflow } from './payment/payment.workflow.ts';
export { webhookDeliveryWorkflow } from './webhooks/webhook-delivery.workflow.ts';
export { retentionWorkflow } from './maintenance/retention.workflow.ts';
