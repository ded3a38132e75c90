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

/**
 * Issuer declines that say the card or its holder must not be charged anywhere: lost, stolen, pick-up, blacklisted,
 * fraud (by the issuer, the processor or a gateway's score) and stopped recurring programs. Sending them to another
 * account is what card networks fine merchants for. Each code with its reference text (spec 7.5).
 */
const NEVER_CASCADE = new Set([
  ...[2684, 2690, 3631, 3632, 4215], // stolen card, card lost, Lost card, Stolen card, LOST_OR_STOLEN_CARD
  ...[2696, 3821, 3822, 3823, 4220, 4244, 4279], // pick up card (with or without fraud), PICK_UP_CARD, Declined - Pick Up Card
  ...[4235, 4243, 4247], // LOST_CARD_PICK_UP_FRAUD_ACCOUNT, PICK_UP_CARD_FRAUD_ACCOUNT, STOLEN_CARD_PICK_UP_FRAUD_ACCOUNT
  2882, // Account or user is blacklisted
  ...[3290, 4197, 4198, 4199, 4250], // Suspected Fraud, FRAUD_DETECTED (by the processor, by the issuer), SUSPECTED_FRAUD
  ...[4255, 4303], // Rejected (<GATEWAY> fraud block), Declined - Fraud Score Too High
  3635, // Declined - Stop all recurring payments
]);

export function statusGroupOf(statusId: number): StatusGroup | undefined {
  return statusById(statusId)?.group;
}

export function mayCascade(statusId: number, firstAccount: { allowRetriesFromOtherMids: boolean; allowInsufficientFundsRetries: boolean }): boolean {
  if (!firstAccount.allowRetriesFromOtherMids || NEVER_CASCADE.has(statusId)) return false;
  const group = statusGroupOf(statusId);
  if (!group || !CASCADE_BY_GROUP[group]) return false;
  return group !== 'insufficientFunds' || firstAccount.allowInsufficientFundsRetries;
}
