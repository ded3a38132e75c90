/**
 * A `mid` named in the request overrides which account is chosen, never whether it may take the payment:
 * it obeys the eligibility of MID selection, and a payment it cannot take is declined with the status
 * saying why, without reaching the processor (DESIGN section 4, docs/decisions.md).
 */

/** How the forced account fits the payment; every fact is true for an account selection could choose. */
export interface ForcedAccountFit {
  readonly fullyLive: boolean;
  readonly coversAmount: boolean;
  readonly currencyConfigured: boolean;
  readonly acceptsNetwork: boolean;
}

export const FORCED_ACCOUNT_REFUSALS = {
  /** Merchant account is inactive. */
  notLive: 3642,
  /** Amount exceeds max ticket. */
  overMaxPrice: 3809,
  /** Invalid payment data (currency or sub type not configured). */
  currencyNotConfigured: 2931,
  /** Merchant Does Not Accept Card Type. */
  networkNotAccepted: 4268,
  /**
   * Max transactions per account already exceeded: of the reference's statuses, the one that says the
   * merchant account's own limit is used up (3809 is the per-payment `maxPrice`; the insufficient-funds
   * "limit" statuses speak of the cardholder and would cascade or salvage).
   */
  monthlyCapReached: 2892,
} as const;

/** The status a forced account declines the payment with, or undefined when it may take it (cap aside). */
export function forcedAccountRefusal(fit: ForcedAccountFit): number | undefined {
  if (!fit.fullyLive) return FORCED_ACCOUNT_REFUSALS.notLive;
  if (!fit.coversAmount) return FORCED_ACCOUNT_REFUSALS.overMaxPrice;
  if (!fit.currencyConfigured) return FORCED_ACCOUNT_REFUSALS.currencyNotConfigured;
  if (!fit.acceptsNetwork) return FORCED_ACCOUNT_REFUSALS.networkNotAccepted;
  return undefined;
}
