import { statusById, type StatusGroup } from '../statuses/status-codes.ts';

/**
 * Which declines may be retried on another merchant account. A decision per status group, with
 * per-code exceptions: a card reported lost or stolen, or a blacklisted account, is never retried.
 * Pure data and a pure function, so the workflow can use it deterministically.
 */
const CASCADE_BY_GROUP: Record<StatusGroup, boolean> = {
  successful: false,
  issuerDecline: true,
  insufficientFunds: true,
  invalidCardDetails: false,
  other: false,
};

/** Lost, stolen, pick-up, blacklisted, fraud (by the issuer, the processor or a gateway's score) and stopped recurring programs. */
const NEVER_CASCADE = new Set([2684, 2690, 2696, 2882, 3290, 3631, 3632, 3635, 3821, 3822, 3823, 4197, 4198, 4199, 4215, 4220, 4235, 4243, 4244, 4247, 4250, 4255, 4279, 4303]);

export function statusGroupOf(statusId: number): StatusGroup | undefined {
  return statusById(statusId)?.group;
}

export function mayCascade(statusId: number, firstAccount: { allowRetriesFromOtherMids: boolean; allowInsufficientFundsRetries: boolean }): boolean {
  if (!firstAccount.allowRetriesFromOtherMids || NEVER_CASCADE.has(statusId)) return false;
  const group = statusGroupOf(statusId);
  if (!group || !CASCADE_BY_GROUP[group]) return false;
  return group !== 'insufficientFunds' || firstAccount.allowInsufficientFundsRetries;
}
