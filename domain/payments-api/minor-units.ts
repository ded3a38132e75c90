import { validationError } from '../errors.ts';

/**
 * The generic `/payments` API speaks in minor units, as Stripe's does: integers in the currency's smallest unit (1999
 * USD is 19.99, 500 JPY is 500 yen, 1230 KWD is 1.230 dinars). The rest of the gateway keeps amounts as two-decimal
 * strings (`numeric(14,2)`, and the processors take two-decimal strings), so the conversions work on text, never
 * floats, and a currency's own decimals decide how many hundredths one minor unit is.
 */

/**
 * Currencies whose minor unit is the whole unit: Stripe's zero-decimal list, which the API follows. ISO 4217 agrees
 * but for MGA, which it gives two decimals (its fifths have not circulated for decades; Stripe and card schemes take
 * whole ariary), and ISK, which ISO 4217 gives no minor unit but Stripe keeps two-decimal (`WHOLE_UNIT_CURRENCIES`).
 */
export const ZERO_DECIMAL_CURRENCIES: readonly string[] = ['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];
/**
 * ISO 4217 currencies with three decimals. The gateway charges hundredths, so their minor-unit amounts must end in
 * 0, as Stripe asks of card payments in them. IQD and LYD, which Stripe does not take, are three-decimal as ISO 4217
 * says (a client counting their minor units as ISO does would otherwise be charged ten times what it meant).
 */
export const THREE_DECIMAL_CURRENCIES: readonly string[] = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'];
/**
 * Two-decimal currencies charged in whole units only: ISK, which Stripe's API kept two-decimal (500 ISK is 50000)
 * when card networks stopped taking fractions of a króna in 2023, and whose amounts it refuses unless they are
 * multiples of 100. A fraction of one cannot be paid, so it is refused here too, never sent on.
 */
export const WHOLE_UNIT_CURRENCIES: readonly string[] = ['ISK'];

const ZERO_DECIMAL = new Set(ZERO_DECIMAL_CURRENCIES);
const THREE_DECIMAL = new Set(THREE_DECIMAL_CURRENCIES);
const WHOLE_UNITS = new Set(WHOLE_UNIT_CURRENCIES);

/** Decimals of the currency's minor unit: 0, 3, or (every other currency) 2. */
export function currencyDecimals(currency: string): 0 | 2 | 3 {
  return ZERO_DECIMAL.has(currency) ? 0 : THREE_DECIMAL.has(currency) ? 3 : 2;
}

/** The largest amount taken, in major units: 99,999,999,999.99 of any currency (whole units of one without cents). */
const MAX_MAJOR_DIGITS = 11;

/**
 * The largest amount taken in a currency, written as an amount of it and in its minor units: 99999999999.99 USD is
 * 9999999999999, 99999999999 JPY is 99999999999, 99999999999.990 KWD is 99999999999990 (the gateway charges hundredths).
 */
function largestAmountOf(currency: string): { major: string; minor: string } {
  const whole = '9'.repeat(MAX_MAJOR_DIGITS);
  if (WHOLE_UNITS.has(currency)) return { major: whole, minor: `${whole}00` };
  const decimals = currencyDecimals(currency);
  const fraction = decimals === 0 ? '' : decimals === 2 ? '99' : '990';
  return { major: fraction ? `${whole}.${fraction}` : whole, minor: `${whole}${fraction}` };
}

/** An amount of the currency and its minor units, as the refusals show it: `1999 for 19.99 USD`. */
function exampleIn(currency: string): string {
  if (WHOLE_UNITS.has(currency)) return `50000 for 500 ${currency}`;
  const decimals = currencyDecimals(currency);
  return decimals === 0 ? `500 for 500 ${currency}` : decimals === 3 ? `1230 for 1.230 ${currency}` : `1999 for 19.99 ${currency}`;
}

function overLargest(field: string, currency: string, example: string) {
  const largest = largestAmountOf(currency);
  return validationError(field, `${field} must be at most ${largest.major} ${currency}, that is ${largest.minor} in minor units (${example})`);
}

/** A positive amount in the currency's minor units as the stored two-decimal string; 400 naming `field` otherwise. */
export function fromMinorUnits(amount: number, currency: string, field = 'amount'): string {
  const decimals = currencyDecimals(currency);
  const example = exampleIn(currency);
  if (!Number.isInteger(amount) || amount < 1) throw validationError(field, `${field} must be a positive integer in minor units (${example})`);
  // Past 2^53 a number is no exact count of minor units, and far past the largest amount: that is the refusal to give.
  if (!Number.isSafeInteger(amount)) throw overLargest(field, currency, example);
  if (decimals === 3 && amount % 10 !== 0) throw validationError(field, `${field} in ${currency} must end in 0: the gateway charges whole hundredths (${example})`);
  if (WHOLE_UNITS.has(currency) && amount % 100 !== 0) throw validationError(field, `${field} in ${currency} must end in 00: ${currency} is charged in whole units (${example})`);
  const hundredths = decimals === 0 ? BigInt(amount) * 100n : decimals === 3 ? BigInt(amount) / 10n : BigInt(amount);
  const major = hundredths / 100n;
  if (String(major).length > MAX_MAJOR_DIGITS) throw overLargest(field, currency, example);
  return `${major}.${String(hundredths % 100n).padStart(2, '0')}`;
}

/**
 * A stored two-decimal amount in the currency's minor units, exact for every amount the gateway now takes. A stored
 * amount with cents in a currency without a minor unit (a price provisioned before prices in one had to be whole,
 * or a `/payments` amount read as hundredths before minor units were the currency's own) has no exact answer: it is
 * shown rounded half up to the whole unit, never refused (an answer about money already charged must not fail).
 */
export function toMinorUnits(amount: string, currency: string): number {
  const match = /^(\d+)\.(\d{2})$/.exec(amount);
  if (!match) throw new Error(`Not a two-decimal amount: ${amount}`);
  const hundredths = BigInt(match[1]!) * 100n + BigInt(match[2]!);
  switch (currencyDecimals(currency)) {
    case 0:
      return Number((hundredths + 50n) / 100n);
    case 3:
      return Number(hundredths * 10n);
    case 2:
      return Number(hundredths);
  }
}

/**
 * Why a two-decimal amount (a product's price, a plan's recurring amount) cannot be charged in the currency, or
 * undefined: a currency without a minor unit, or charged in whole units (ISK), takes whole amounts only.
 */
export function amountProblemIn(amount: string, currency: string): string | undefined {
  if (/^\d+(\.0*)?$/.test(amount)) return undefined;
  if (currencyDecimals(currency) === 0) return `must be a whole amount in ${currency} (it has no minor unit)`;
  if (WHOLE_UNITS.has(currency)) return `must be a whole amount in ${currency} (it is charged in whole units)`;
  return undefined;
}
