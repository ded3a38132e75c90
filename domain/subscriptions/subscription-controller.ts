/** What a merchant may ask of a subscription's billing workflow. */
export const SUBSCRIPTION_ACTIONS = ['cancel', 'pause', 'resume'] as const;
export type SubscriptionAction = (typeof SUBSCRIPTION_ACTIONS)[number];

/**
 * What became of an action sent to a subscription's billing workflow:
 * - `applied`: billing took it in its turn and the subscription shows it (or what an action taken after it left);
 * - `accepted`: billing has it and the subscription shows it once billing gets to it (a cancel, or an action held
 *   while a rebill is charged);
 * - `not_running`: no workflow bills the subscription.
 */
export type SentAction = 'applied' | 'accepted' | 'not_running';

/** Sends an action to a subscription's workflow (port; the Temporal adapter sends a signal or an update). */
export interface SubscriptionController {
  send(input: { tenantId: number; subscriptionId: number; action: SubscriptionAction }): Promise<SentAction>;
}
