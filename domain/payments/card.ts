import { domainToASCII, domainToUnicode } from 'node:url';
import type { CardNetwork } from '../catalog/product.ts';

/** Luhn check digit validation. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

interface NetworkRule {
  readonly network: CardNetwork;
  readonly matches: (bin: string) => boolean;
  readonly lengths: readonly number[];
  readonly cvvLength: number;
}

const range = (bin: string, digits: number, from: number, to: number) => {
  const prefix = Number(bin.slice(0, digits));
  return prefix >= from && prefix <= to;
};

/**
 * The five networks the gateway recognises from the BIN (spec: "five card networks"). NetworkA and
 * NetworkB are the two the spec names; C, D and E follow the usual 3/6/35 prefixes.
 */
const NETWORK_RULES: readonly NetworkRule[] = [
  { network: 'NetworkA', matches: (bin) => bin.startsWith('4'), lengths: [13, 16, 19], cvvLength: 3 },
  { network: 'NetworkB', matches: (bin) => range(bin, 2, 51, 55) || range(bin, 4, 2221, 2720), lengths: [16], cvvLength: 3 },
  { network: 'NetworkC', matches: (bin) => bin.startsWith('34') || bin.startsWith('37'), lengths: [15], cvvLength: 4 },
  { network: 'NetworkD', matches: (bin) => bin.startsWith('6011') || bin.startsWith('65') || range(bin, 3, 644, 649), lengths: [16, 19], cvvLength: 3 },
  { network: 'NetworkE', matches: (bin) => range(bin, 4, 3528, 3589), lengths: [16, 19], cvvLength: 3 },
];

export function detectNetwork(binOrPan: string): CardNetwork | undefined {
  return NETWORK_RULES.find((rule) => rule.matches(binOrPan))?.network;
}

export function cvvLengthFor(network: CardNetwork | undefined): number {
  return NETWORK_RULES.find((rule) => rule.network === network)?.cvvLength ?? 3;
}

/** A number is valid when it is 12-19 digits, fits its network's lengths and passes Luhn. */
export function isValidCardNumber(pan: string): boolean {
  if (!/^\d{12,19}$/.test(pan)) return false;
  const rule = NETWORK_RULES.find((r) => r.matches(pan));
  if (rule && !rule.lengths.includes(pan.length)) return false;
  return passesLuhn(pan);
}

/** Expiry is valid when month is 1-12, year is plausible, and the card has not expired at month end. */
export function isValidExpiry(month: number | undefined, year: number | undefined, now: Date): boolean {
  if (!month || !year || !Number.isInteger(month) || !Number.isInteger(year)) return false;
  if (month < 1 || month > 12) return false;
  const fullYear = year < 100 ? 2000 + year : year;
  if (fullYear > now.getUTCFullYear() + 25) return false;
  return fullYear > now.getUTCFullYear() || (fullYear === now.getUTCFullYear() && month >= now.getUTCMonth() + 1);
}

/**
 * Which half of an expiry `isValidExpiry` refuses is at fault, for an API that names the field: the year when it
 * is missing, past or too far ahead, else the month (missing, out of range, or past within this year).
 */
export function expiryFieldAtFault(month: number | undefined, year: number | undefined, now: Date): 'month' | 'year' {
  if (!year || !Number.isInteger(year)) return 'year';
  const fullYear = normalizeExpiryYear(year);
  if (fullYear < now.getUTCFullYear() || fullYear > now.getUTCFullYear() + 25) return 'year';
  return 'month';
}

export function normalizeExpiryYear(year: number): number {
  return year < 100 ? 2000 + year : year;
}

/**
 * Country of a BIN where the gateway knows it. A production deployment would load a BIN database;
 * this table covers the sandbox cards (documented in the README).
 */
const BIN_COUNTRIES: readonly [prefix: string, country: string][] = [
  ['40000007', 'BR'],
  ['400000', 'US'],
  ['424242', 'US'],
  ['555555', 'US'],
];

export function binCountry(bin: string): string | undefined {
  return BIN_COUNTRIES.find(([prefix]) => bin.startsWith(prefix))?.[1];
}

/**
 * One spelling per mailbox, as far as syntax goes: the blocklist, velocity and one-subscription checks compare
 * addresses as written (lower-cased), so every other way of writing one address would pass them as another.
 * - The local part is dot-atoms (RFC 5322 `atext`, and letters, marks and digits of any script): no quoted
 *   string, no comment (`bad(x)@example.com` is `bad@example.com`), no leading, trailing or doubled dot.
 * - The domain is host-name labels (letters, marks and digits of any script, hyphens inside), at least two, the last
 *   of two characters or more: no trailing root dot (`example.com.` is `example.com`), no address literal, no empty
 *   label; and in the one spelling IDNA gives it (`normalizeEmail`).
 * - No white space, control or format character anywhere: an invisible one (a zero-width space, a soft hyphen) would
 *   make another address too.
 */
const ATOM = "[\\p{L}\\p{M}\\p{N}!#$%&'*+\\-/=?^_`{|}~]+";
const LABEL = '[\\p{L}\\p{M}\\p{N}](?:[\\p{L}\\p{M}\\p{N}-]*[\\p{L}\\p{M}\\p{N}])?';
const TOP_LABEL = '[\\p{L}\\p{M}\\p{N}][\\p{L}\\p{M}\\p{N}-]*[\\p{L}\\p{M}\\p{N}]';
const LONGEST_LOCAL_PART_OCTETS = 64;
const UTF8 = new TextEncoder();
const EMAIL = new RegExp(`^${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${TOP_LABEL}$`, 'u');
/**
 * An e-mail as payments keep and compare it (customers, velocity, blocklists, subscriptions): trimmed and lower-cased
 * here, never by PostgreSQL's `lower()`, whose case rules differ for some letters (a final `Σ`), and its domain in one
 * spelling: the one IDNA (UTS 46) maps it to, written in Unicode, so `bücher.de`, `xn--bcher-kva.de` and a fullwidth
 * `ｂücher.de` are one domain. A domain IDNA refuses is left as written (and refused by `isValidEmail`).
 */
export function normalizeEmail(email: string): string {
  const lowered = email.trim().toLowerCase();
  const at = lowered.lastIndexOf('@');
  const ascii = at < 0 ? '' : domainToASCII(lowered.slice(at + 1));
  return ascii === '' ? lowered : `${lowered.slice(0, at)}@${domainToUnicode(ascii)}`;
}

/**
 * An address in one form only (as `normalizeEmail` writes it): a decomposed `é` (e + combining accent) would also be
 * another address for those checks, and so would a domain IDNA cannot map.
 */
export function isValidEmail(email: string | undefined): email is string {
  if (typeof email !== 'string' || email.length > 320 || !EMAIL.test(email) || email !== email.normalize('NFC')) return false;
  // A mailbox name of more than 64 octets (RFC 5321, and RFC 6531 for UTF-8 ones) is one no mail server delivers to.
  if (UTF8.encode(email.slice(0, email.lastIndexOf('@'))).length > LONGEST_LOCAL_PART_OCTETS) return false;
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const ascii = domainToASCII(domain);
  return ascii !== '' && domainToUnicode(ascii) === domain;
}
