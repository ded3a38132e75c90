import type { CardNetwork } from '../catalog/product.ts';
import { binCountry, cvvLengthFor, detectNetwork, isValidCardNumber, isValidEmail, isValidExpiry, normalizeEmail, normalizeExpiryYear } from './card.ts';
import type { SubmitRequest } from './submit-request.schema.ts';
import type { SubmitInfo } from './submit-result.ts';

/** A card that passed validation; the PAN and CVV only ever leave this shape sealed. */
export interface ValidatedCard {
  readonly pan: string;
  readonly cvv: string;
  readonly expiryMonth: number;
  readonly expiryYear: number;
  readonly holderName?: string;
  /** The BIN as shown and stored (see `shownCardDigits`). */
  readonly bin: string;
  readonly last4: string;
  readonly network: CardNetwork;
  readonly binCountry?: string;
}

/** The first 8 digits whatever the number's length: what blocklists and BIN tables match on, in memory only. */
export const issuerPrefixOf = (pan: string): string => pan.slice(0, 8);

type ShownCardDigits = Pick<ValidatedCard, 'bin' | 'last4'>;

/**
 * What of a card number may be shown and stored (PCI DSS: at most the first 8 and last 4 digits of a number of 16 or
 * more digits, the first 6 and last 4 of a shorter one): the first 8 and last 4 of a 13-digit number leave one digit
 * unknown, which the Luhn check gives away. A number of no known network (12 to 19 digits, any prefix) shows nothing:
 * a 12-digit one would be all but two digits.
 */
export function shownCardDigits(pan: string): ShownCardDigits | undefined {
  if (!detectNetwork(pan)) return undefined;
  return { bin: pan.slice(0, pan.length >= 16 ? 8 : 6), last4: pan.slice(-4) };
}

export type PreValidation =
  | { readonly ok: true; readonly email: string; readonly card: ValidatedCard }
  | { readonly ok: false; readonly info: SubmitInfo; readonly error: string; readonly card?: ShownCardDigits };

const fail = (error: string, card?: ShownCardDigits): PreValidation => ({ ok: false, info: 'Failed', error, card });

/**
 * The pre-processing validations of spec 7.1, in order: sessions, e-mail, card data, network accepted
 * by the product. Pure: database checks (MID, blocklists, velocity) come after.
 */
export function validateSubmit(body: SubmitRequest, acceptedNetworks: readonly string[], now: Date): PreValidation {
  if (!body.serviceSession && !body.partnerSession) return fail('Either serviceSession or partnerSession is required');
  // Checked as it is kept: lower-casing can lengthen an address (`İ` becomes two characters).
  const email = typeof body.email === 'string' ? normalizeEmail(body.email) : undefined;
  if (!isValidEmail(email)) return fail('Invalid Email');
  const card = body.card ?? {};
  if (card.encrypted !== undefined && (!card.bin || !card.lastFour)) return fail('Bin and Last4 required along with Encrypted data');

  const pan = (card.pan ?? '').replace(/[\s-]/g, '');
  // A number of none of the five networks fails validation too: spec 7.1's "<network> cards not supported" names one.
  const network = isValidCardNumber(pan) ? detectNetwork(pan) : undefined;
  if (!network) return fail('Invalid CC Number');
  // `bin` and `lastFour` sent with a plain number must be its own, as with an encrypted one (they are what is shown).
  if ((card.bin && !pan.startsWith(card.bin)) || (card.lastFour && !pan.endsWith(card.lastFour))) return fail('Invalid CC Number');
  const summary = shownCardDigits(pan);
  if (!isValidExpiry(card.expiryMonth, card.expiryYear, now)) return fail('Invalid expiry', summary);
  const cvv = card.cvv?.trim() ?? '';
  if (!new RegExp(`^\\d{${cvvLengthFor(network)}}$`).test(cvv)) return fail('Invalid CVV', summary);
  if (!summary || !acceptedNetworks.includes(network)) return fail(`${network} cards not supported`, summary);

  return {
    ok: true,
    email,
    card: {
      pan,
      cvv,
      expiryMonth: card.expiryMonth!,
      expiryYear: normalizeExpiryYear(card.expiryYear!),
      holderName: card.name,
      ...summary,
      network,
      // The first 8 digits, whatever the number's length: looked up, never stored or shown.
      binCountry: binCountry(issuerPrefixOf(pan)),
    },
  };
}

/** `primary_secondary` or `primary` (spec 2.1). */
export function splitSubAffiliate(value: string | undefined): { primary?: string; secondary?: string } {
  if (!value) return {};
  const index = value.indexOf('_');
  return index < 0 ? { primary: value } : { primary: value.slice(0, index) || undefined, secondary: value.slice(index + 1) || undefined };
}
