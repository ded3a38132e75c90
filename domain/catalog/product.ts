/** Card networks the gateway recognises from the BIN. */
export const CARD_NETWORKS = ['NetworkA', 'NetworkB', 'NetworkC', 'NetworkD', 'NetworkE'] as const;
export type CardNetwork = (typeof CARD_NETWORKS)[number];

export interface SubscriptionPlan {
  /** Price of each recurring charge, decimal string in the product currency. */
  readonly recurringAmount: string;
  readonly intervalDays: number;
  readonly trialDays: number;
  /** Days a subscription stays active after an insufficient-funds decline (decline salvage); 0 disables. */
  readonly gracePeriodDays: number;
  /** The billing period in seconds, overriding `intervalDays` (test fixtures bill every few seconds). */
  readonly intervalSeconds?: number;
  /** The trial in seconds, overriding `trialDays`. */
  readonly trialSeconds?: number;
  /** Dunning: seconds before each retry of a declined rebill, by decline group; absent, the defaults of `domain/subscriptions/dunning.ts`. */
  readonly dunning?: { readonly insufficientFundsRetrySeconds?: readonly number[]; readonly otherRetrySeconds?: readonly number[] };
}
