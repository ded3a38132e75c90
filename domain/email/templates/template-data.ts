import { Type } from '@sinclair/typebox';

/** One line of text a template shows (no markup: React escapes it). */
export const Line = (maxLength: number) => Type.String({ minLength: 1, maxLength });

/** Links the templates render: web addresses only, so caller data cannot smuggle a `javascript:` link. */
export const HttpUrl = Type.String({ pattern: '^https?://[^\\s<>"]+$', maxLength: 2048, description: 'http(s) URL' });

/**
 * An amount as the store computed it, shown exactly as given: a decimal string (`"19.90"`) or a JSON number.
 * Templates never calculate with money; totals come from the store, which owns the arithmetic.
 */
export const DisplayAmount = Type.Union(
  [
    Type.String({ pattern: '^-?\\d{1,12}(\\.\\d{1,4})?$' }),
    // The strings' range: a larger number would print in exponent form (`1e+21`), no amount a customer can read.
    Type.Number({ minimum: -999_999_999_999.9999, maximum: 999_999_999_999.9999 }),
  ],
  { description: 'Decimal string (up to 12 digits and 4 decimals) or a number in the same range' },
);

export function formatAmount(amount: string | number, currency: string): string {
  return `${currency} ${typeof amount === 'number' ? String(amount) : amount}`;
}
