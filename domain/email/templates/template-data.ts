import { Type } from '@sinclair/typebox';

/** One line of text a template shows (no markup: React escapes it). */
export const Line = (maxLength: number) => Type.String({ minLength: 1, maxLength });

/** Links the templates render: web addresses only, so caller data cannot smuggle a `javascript:` link. */
export const HttpUrl = Type.String({ pattern: '^https?://[^\\s<>"]+$', maxLength: 2048, description: 'http(s) URL' });

/**
 * An amount as the store computed it, shown exactly as given: a decimal string (`"19.90"`) or a JSON number.
 * Templates never calculate with money; totals come from the store, which owns the arithmetic.
 */
export const DisplayAmount = Type.Union([Type.String({ pattern: '^-?\\d{1,12}(\\.\\d{1,4})?$' }), Type.Number()], { description: 'Decimal string or number' });

export function formatAmount(amount: string | number, currency: string): string {
  return `${currency} ${typeof amount === 'number' ? String(amount) : amount}`;
}
