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

/** A number written with digits a double cannot hold as the whole number it reads as, marked while the body is read. */
class InexactNumber {}

/**
 * A body holding such a number, refused whatever field holds it: taken, it would be another number (an amount rounded,
 * a card number sent as a JSON number changed), and a marker left in its place could pass a field of another type.
 * `path` names the field (`card.number`); the number itself is never repeated (it may be a card number).
 */
export class InexactNumberError extends Error {
  readonly statusCode = 400;
  constructor(readonly path: string) {
    super(`${path} must be written exactly: it holds a number with more digits than a number keeps (amounts are whole minor units, text fields strings)`);
    this.name = 'InexactNumberError';
  }
}

/**
 * Reads JSON text as `JSON.parse` does, refusing (`InexactNumberError`) a number that is not exactly the whole number
 * it reads as (`"amount": 999.99999999999999999` would otherwise read as 1000). Every other number reads as ever.
 */
export function parseExactWholeNumbers(text: string): unknown {
  let inexact = false;
  const parsed: unknown = JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || context?.source === undefined || isExactlyWhole(context.source, value)) return value;
    inexact = true;
    return new InexactNumber();
  });
  if (inexact) throw new InexactNumberError(pathOfInexact(parsed));
  return parsed;
}

/** Where the marker lies, as a dotted path; walked without recursion or copied paths (a body may nest thousands deep). */
function pathOfInexact(root: unknown): string {
  type Step = { readonly value: unknown; readonly key?: string; readonly parent?: Step };
  const pending: Step[] = [{ value: root }];
  for (let step = pending.pop(); step; step = pending.pop()) {
    if (step.value instanceof InexactNumber) {
      const keys: string[] = [];
      for (let at: Step | undefined = step; at?.key !== undefined; at = at.parent) keys.unshift(at.key);
      return keys.join('.') || 'body';
    }
    if (step.value === null || typeof step.value !== 'object') continue;
    for (const [key, value] of Object.entries(step.value).reverse()) pending.push({ value, key, parent: step });
  }
  return 'body';
}
