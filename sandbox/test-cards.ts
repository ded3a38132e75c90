/**
 * Test cards of the sandbox card processor (DESIGN.md section 6), as data.
 *
 * The sandbox answers deterministically by card number (PAN); expiry is not checked, nor the CVV's value (one card
 * only asks that it is sent). Status
 * ids are those of the status-code reference (spec 7.5). This table is the single source of truth:
 * the sandbox server reads it, the tests iterate over it and `testCardsMarkdown()` renders it as tables. The README's
 * section is a shorter summary written by hand; a test checks it names every card. Test card numbers may only appear in `sandbox/` and in tests, never in product code.
 *
 * Rules that apply to every card, in this order:
 *  1. amount cents `.97`: HTTP 500 `{error:"processor unavailable"}`, nothing is authorized (retry-safe);
 *  2. the card's behaviour below (any other Luhn-valid number is approved, a Luhn-invalid one is
 *     declined 3256 "Invalid credit card number");
 *  3. amount cents `.98`: the first answer for that reference is delayed by `slowResponseMs`
 *     (the authorization is stored and counted at once, so a status inquiry already shows it).
 */
import { passesLuhn } from '../domain/payments/card.ts';

export type CardNetwork = 'NetworkA' | 'NetworkB';

export type CardBehaviour =
  /** Approved with 2636 "Transaction succeeded"; with `securityCodeRequired`, declined 3627 when sent without a CVV. */
  | { readonly kind: 'approve'; readonly securityCodeRequired?: boolean }
  /** Declined with the given status id. */
  | { readonly kind: 'decline'; readonly statusId: number; readonly message: string }
  /**
   * 3-D Secure challenge when the request asks for 3DS; declined 4167 "Strong Customer Authentication
   * Required" when it does not. With `authenticationFails` the cardholder's "authenticate" still fails.
   */
  | { readonly kind: 'challenge'; readonly authenticationFails: boolean; readonly redirect?: boolean }
  /** Declined on the first merchant id seen for the order reference, approved on any other (cascade). */
  | { readonly kind: 'cascade'; readonly statusId: number; readonly message: string };

export interface TestCard {
  readonly pan: string;
  readonly network: CardNetwork;
  readonly behaviour: CardBehaviour;
  /** One line for the README table. */
  readonly description: string;
}

export const APPROVED = { statusId: 2636, message: 'Transaction succeeded' } as const;
export const PREAUTHORIZED = { statusId: 3367, message: 'Preauthorized' } as const;
export const SCA_REQUIRED = { statusId: 4167, message: 'Strong Customer Authentication Required' } as const;
export const THREE_DS_FAILED = { statusId: 4172, message: '3DS Failed' } as const;
export const INVALID_SECURITY_CODE = { statusId: 3627, message: 'Invalid card security code' } as const;
export const INVALID_CARD_NUMBER = { statusId: 3256, message: 'Invalid credit card number' } as const;
export const VOIDED = { statusId: 4166, message: 'Authorized then Voided/Cancelled' } as const;

export const TEST_CARDS: readonly TestCard[] = [
  { pan: '4242424242424242', network: 'NetworkA', behaviour: { kind: 'approve' }, description: 'approved 2636' },
  { pan: '5555555555554444', network: 'NetworkB', behaviour: { kind: 'approve' }, description: 'approved 2636 (NetworkB)' },
  { pan: '4000000000000002', network: 'NetworkA', behaviour: { kind: 'decline', statusId: 3617, message: 'Declined' }, description: 'declined 3617 Declined (issuer decline)' },
  { pan: '4000000000009995', network: 'NetworkA', behaviour: { kind: 'decline', statusId: 3512, message: 'Insufficient Funds' }, description: 'declined 3512 Insufficient Funds' },
  { pan: '4000000000000069', network: 'NetworkA', behaviour: { kind: 'decline', statusId: 3137, message: 'Card Expired' }, description: 'declined 3137 Card Expired' },
  { pan: '4000000000000127', network: 'NetworkA', behaviour: { kind: 'decline', statusId: 3627, message: 'Invalid card security code' }, description: 'declined 3627 Invalid card security code' },
  { pan: '4000000000000119', network: 'NetworkA', behaviour: { kind: 'decline', statusId: 4273, message: 'Processing Error - Try Again' }, description: 'declined 4273 Processing Error - Try Again' },
  {
    pan: '4000000000003220',
    network: 'NetworkA',
    behaviour: { kind: 'challenge', authenticationFails: false },
    description: '3DS challenge; "authenticate" → approved 2636 ECI 05 (02 on NetworkB); without 3DS: declined 4167, unless merchant-initiated (a rebill: approved)',
  },
  {
    pan: '4000000000003063',
    network: 'NetworkA',
    behaviour: { kind: 'challenge', authenticationFails: true },
    description: '3DS challenge whose authentication always fails → declined 4172 3DS Failed, or approved ECI 07 when proceeding without authentication',
  },
  {
    pan: '4000000000003246',
    network: 'NetworkA',
    behaviour: { kind: 'challenge', authenticationFails: false, redirect: true },
    description: 'the processor asks for a browser redirect (even without 3DS requested); "authenticate" → approved 2636 ECI 05',
  },
  {
    pan: '4000000000000341',
    network: 'NetworkA',
    behaviour: { kind: 'cascade', statusId: 3617, message: 'Declined' },
    description: 'declined 3617 on the first merchant id of an order reference, approved 2636 on any other (cascade)',
  },
  {
    pan: '4000000000000101',
    network: 'NetworkA',
    behaviour: { kind: 'approve', securityCodeRequired: true },
    description: 'approved 2636 when sent with a CVV, declined 3627 Invalid card security code without one (a rebill, or a CVV no longer kept)',
  },
  { pan: '4000000760000002', network: 'NetworkA', behaviour: { kind: 'approve' }, description: 'approved 2636; a Brazilian BIN (BIN-country blocklist tests)' },
];

export interface AmountRule {
  /** The two decimals of the amount that trigger the rule. */
  readonly cents: string;
  readonly description: string;
}

export const AMOUNT_RULES: readonly AmountRule[] = [
  {
    cents: '98',
    description:
      'slow: the first answer for that reference comes after `slowResponseMs` (default 20 s); the authorization is stored and counted (once) immediately, so a status inquiry shows it',
  },
  { cents: '97', description: 'HTTP 500 `{"error":"processor unavailable"}`; nothing is authorized, safe to retry' },
  { cents: '35', description: 'a card that would be approved is declined 3635 Declined - Stop all recurring payments (a hard decline: rebills stop)' },
  { cents: '12', description: 'a card that would be approved is declined 3512 Insufficient Funds (rebills are retried on the dunning schedule)' },
];

/** Declines chosen by amount (the recurring amount of a plan exercises dunning with a card the first payment approved). */
export const AMOUNT_DECLINES: Readonly<Record<string, { statusId: number; message: string }>> = {
  '35': { statusId: 3635, message: 'Declined - Stop all recurring payments' },
  '12': { statusId: 3512, message: 'Insufficient Funds' },
};

export function findTestCard(pan: string): TestCard | undefined {
  return TEST_CARDS.find((card) => card.pan === pan);
}

/** NetworkB for 5-prefixed (and 2-series) numbers, NetworkA otherwise. */
export function networkOf(pan: string): CardNetwork {
  return findTestCard(pan)?.network ?? (/^(5|2[2-7])/.test(pan) ? 'NetworkB' : 'NetworkA');
}

export function luhnValid(pan: string): boolean {
  return /^\d{12,19}$/.test(pan) && passesLuhn(pan);
}

/** The cards and amount rules as Markdown tables, rendered from the data above. */
export function testCardsMarkdown(): string {
  const lines = [
    '| card number | network | outcome |',
    '| --- | --- | --- |',
    ...TEST_CARDS.map((card) => `| \`${card.pan}\` | ${card.network} | ${card.description} |`),
    '| any other Luhn-valid number | by prefix | approved 2636 (Luhn-invalid: declined 3256) |',
    '',
    '| amount ends in | effect |',
    '| --- | --- |',
    ...AMOUNT_RULES.map((rule) => `| \`.${rule.cents}\` | ${rule.description} |`),
  ];
  return lines.join('\n');
}
