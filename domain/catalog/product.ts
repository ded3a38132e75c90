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
}
