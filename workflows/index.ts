// The worker bundles this file: every workflow the product runs is exported here.
export { webhookDeliveryWorkflow } from './webhook-delivery.workflow.ts';
