import { createWebhookDeliveryActivities, type WebhookActivityDeps } from './webhook-delivery.activities.ts';

export type ActivityDeps = WebhookActivityDeps;

/** Every activity of the worker, built from its dependencies (no module-level connections). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWebhookDeliveryActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
