/** Why a payment failed with no attempt at a processor (kept on its order, shown by `GET /payments/{id}`). */
export const UNPROCESSED_REASONS = ['already_subscribed', 'no_merchant_account', 'card_network_not_supported'] as const;
export type UnprocessedReason = (typeof UNPROCESSED_REASONS)[number];
