/** What a merchant may ask of a subscription's billing workflow. */
export const SUBSCRIPTION_ACTIONS = ['cancel', 'pause', 'resume'] as const;
export type SubscriptionAction = (typeof SUBSCRIPTION_ACTIONS)[number];

/** Signals a subscription's workflow (port; the Temporal adapter sends the signal). `not_running`: no workflow bills it. */
export interface SubscriptionController {
  signal(input: { tenantId: number; subscriptionId: number; action: SubscriptionAction }): Promise<'signalled' | 'not_running'>;
}
