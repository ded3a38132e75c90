import { passesLuhn } from './card.ts';

/** A run of 13 to 19 digits, spaces or dashes between them: how a card number is written. */
const CARD_NUMBER = /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g;
/** A security code after its name: `"cvv":"739"`, `cvc 739`, `cvv2=7391`, `security_code: 739`. */
const SECURITY_CODE = /((?:cvv2?|cvc2?|cid|security[ _-]?code)["']?\s*[:=(]?\s*["']?)\d{3,4}(?!\d)/gi;

/**
 * A processor's text with any card number it echoes masked (its first 6 and last 4 digits kept) and any security code
 * written after its name replaced. What a processor answers is kept (the transaction's record, the caller's
 * `gatewayResponses`, the payment's history) and shown; the card it was sent must never come back that way. A digit
 * run is masked only when it passes Luhn, as every card number the gateway sends does: an id or a timestamp of the same
 * length is left as it is, nine times in ten.
 */
export function maskCardEcho(text: string): string {
  return text
    .replace(CARD_NUMBER, (run) => {
      const digits = run.replace(/\D/g, '');
      return passesLuhn(digits) ? `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}` : run;
    })
    .replace(SECURITY_CODE, (_, name: string) => `${name}***`);
}
