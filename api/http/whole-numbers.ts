/**
 * Whether a JSON number's text is exactly the whole number the parser read it as. `1000`, `1000.00` and `1e3` are;
 * `999.99999999999999999` is not, though it reads as 1000 (a double holds about 17 significant digits), nor is
 * `9007199254740993`, which reads as 9007199254740992.
 */
export function isExactlyWhole(source: string, value: number): boolean {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(source);
  if (!match || !Number.isInteger(value)) return false;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = whole! + fraction;
  const significant = digits.replace(/^0+/, '');
  if (significant === '') return value === 0;
  // Where the decimal point falls in the significant digits, the exponent applied.
  const point = whole!.length - (digits.length - significant.length) + Number(exponent);
  // A whole number a double can hold has at most 309 digits; an exponent past them is no whole number read here.
  if (point <= 0 || point > 400) return false;
  const integerDigits = point >= significant.length ? significant + '0'.repeat(point - significant.length) : significant.slice(0, point);
  const fractionDigits = point >= significant.length ? '' : significant.slice(point);
  return /^0*$/.test(fractionDigits) && BigInt(`${sign}${integerDigits}`) === BigInt(value);
}

/**
 * A number written with digits a double cannot hold as the whole number it reads as: kept for what it is, neither a
 * number nor a string, so every field refuses it by type (an integer field says "must be integer", a text field "must
 * be string": a 19-digit card number sent as a JSON number is not taken as its text).
 */
export class InexactNumber {
  constructor(readonly source: string) {}
  toJSON(): string {
    return this.source;
  }
}

/**
 * A `JSON.parse` reviver: a number that is not exactly the whole number it reads as is kept as an `InexactNumber`
 * (`"amount": 999.99999999999999999` would otherwise read as 1000 and be taken by a field typed integer). Every other
 * number reads as ever.
 */
export function keepInexactWholeNumbers(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== 'number' || !Number.isInteger(value) || context?.source === undefined) return value;
  return isExactlyWhole(context.source, value) ? value : new InexactNumber(context.source);
}
