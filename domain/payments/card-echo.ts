import { passesLuhn } from './card.ts';

/** Digits in groups split by single spaces, dashes, dots or underscores (`4111 1111 1111 1111 123`, `4111.1111.…`): where a card number may hide. */
const DIGIT_RUN = /(?<!\d)\d+(?:[ ._-]\d+)*(?!\d)/g;
/** A security code after its name: `"cvv":"739"`, `"cvvNumber":"739"`, `cvc 739`, `CVC2 is 739`, `security_code: 739`. */
const SECURITY_CODE = /(\b(?:cvv2?|cvc2?|cid|security[ _-]?code)\w*["']?\s*(?:is\s+|[:=(]\s*)?["']?)\d{3,4}(?!\d)/gi;
const CARD_LENGTH = { min: 13, max: 19 } as const;

/**
 * A processor's text with any card number it echoes masked (its first 6 and last 4 digits kept) and any security code
 * written after its name replaced. What a processor answers is kept (the transaction's record, the caller's
 * `gatewayResponses`, the payment's history) and shown; the card it was sent must never come back that way. A card
 * number is 13 to 19 digits passing Luhn, as every number the gateway sends does, written whole or in groups; it is
 * found inside a longer run of groups too (followed by its CVV or expiry). Digits inside an id (letters on both
 * sides) stay whole; an id or a timestamp ending in such digits is left as it is nine times in ten.
 */
export function maskCardEcho(text: string): string {
  return maskCardNumbers(text).replace(SECURITY_CODE, (_, name: string) => `${name}***`);
}

/** Text with any card number in it masked (first 6 and last 4 digits kept), and nothing else changed. */
export function maskCardNumbers(text: string): string {
  return text.replace(DIGIT_RUN, (run: string, offset: number) => (isInsideId(text, offset, run.length) ? run : maskCardsInRun(run)));
}

/**
 * Whether the digit run at `offset` sits inside an id: glued to a letter or `_` before it and running straight on into
 * a letter after it (`re_77151283634847ae…`, a hex reference), which a mask must keep whole so that the record still
 * names what it names. A run at the start of the text or after a separator is looked at whatever follows it: a
 * processor's track-2 echo (`4111…D2512…`) or a number typed into an e-mail (`4111…gmail.com`) is a card number.
 */
function isInsideId(text: string, offset: number, length: number): boolean {
  return /[A-Za-z_]/.test(text.charAt(offset - 1)) && /[A-Za-z]/.test(text.charAt(offset + length));
}

/**
 * Whether text holds a card number, including one inside letters (`ref4111…x`), which `maskCardNumbers` leaves to
 * ids: text refused for holding one is never kept, so a stricter look costs only a refusal. `minDigits` raised for
 * text that may hold other long numbers (a phone number has at most 15 digits).
 */
export function holdsCardNumber(text: string, minDigits: number = CARD_LENGTH.min): boolean {
  const typed = asTypedGroups(text);
  return typed.replace(DIGIT_RUN, (run) => maskCardsInRun(run, minDigits)) !== typed;
}

/**
 * Text with its digit groups as a person may have split them, for the refusal's look only: fullwidth and other
 * compatibility digits as ASCII digits, invisible format characters (a zero-width space) gone, and any run of white
 * space (tabs, no-break spaces, two spaces) as one space. Slashes, commas and brackets still end a run: they split
 * two phone numbers in one field (`020 7946 7946 / 07700 669154`), which joined would pass Luhn one time in ten.
 */
function asTypedGroups(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/\s+/gu, ' ');
}

/**
 * Whether the text is a card number and nothing else (its groups split as `holdsCardNumber` reads them): for a field
 * whose own digits may be long ids (an e-mail tag `qa+1788318766663@…`), where only a number typed in its place is
 * surely a card.
 */
export function isCardNumberAlone(text: string): boolean {
  const typed = asTypedGroups(text).trim();
  return /^\d[\d ._-]*$/.test(typed) && holdsCardNumber(typed);
}

/**
 * The first of the named fields (`address.firstName`: its text, or its text and the fewest digits a card number in it
 * may have) that holds a card number: text a cardholder types at checkout, where a number pasted by mistake would
 * otherwise be kept in plain text (the order, the customer, the transaction, the payment's history). Fields the
 * merchant fills in (sessions, ids, props) are its own to keep clean.
 */
export function fieldHoldingCardNumber(fields: Readonly<Record<string, string | undefined | { text: string | undefined; minDigits: number }>>): string | undefined {
  return Object.entries(fields).find(([, field]) => {
    const { text, minDigits } = typeof field === 'object' ? field : { text: field, minDigits: CARD_LENGTH.min };
    return text !== undefined && holdsCardNumber(text, minDigits);
  })?.[0];
}

/** The run with each card number in it masked: the longest Luhn-valid span of whole groups from each group on. */
function maskCardsInRun(run: string, minDigits: number = CARD_LENGTH.min): string {
  const parts = run.split(/([ ._-])/);
  const groups = parts.filter((_, index) => index % 2 === 0);
  const separators = parts.filter((_, index) => index % 2 === 1);
  let masked = '';
  for (let first = 0; first < groups.length; ) {
    let card: { last: number; digits: string } | undefined;
    let digits = '';
    for (let last = first; last < groups.length && digits.length + groups[last]!.length <= CARD_LENGTH.max; last++) {
      digits += groups[last];
      if (digits.length >= minDigits && passesLuhn(digits)) card = { last, digits };
    }
    const taken = card ? card.last : first;
    masked += card ? `${card.digits.slice(0, 6)}${'*'.repeat(card.digits.length - 10)}${card.digits.slice(-4)}` : groups[first];
    if (taken + 1 < groups.length) masked += separators[taken];
    first = taken + 1;
  }
  return masked;
}
