import { validationError } from './errors.ts';

const DECIMAL = /^(\d{1,12})(?:\.(\d{1,2}))?$/;
/** The largest amount a money column (`numeric(14, 2)`) holds. */
const MAX_MONEY = '999999999999.99';

/**
 * Normalises an amount given as a JSON number or decimal string to a 2-decimal string, by text,
 * never by float arithmetic. `29.9` → `"29.90"`.
 */
export function toMoneyString(value: number | string, field: string): string {
  const text = typeof value === 'number' ? value.toString() : value;
  const match = DECIMAL.exec(text);
  if (!match) throw validationError(field, `${field} must be an amount from 0 to ${MAX_MONEY} with at most 2 decimals`);
  return `${BigInt(match[1]!)}.${(match[2] ?? '').padEnd(2, '0')}`;
}

/** A normalised amount (`toMoneyString`) above zero, by text: `0.00` is not. */
export function isPositiveMoney(amount: string): boolean {
  return /[1-9]/.test(amount);
}

/** Fractions such as 0.1 (10%) to a 4-decimal string. */
export function toFractionString(value: number | string, field: string): string {
  const text = typeof value === 'number' ? value.toString() : value;
  const match = /^(0|1)(?:\.(\d{1,4}))?$/.exec(text);
  if (!match || (match[1] === '1' && /[1-9]/.test(match[2] ?? ''))) throw validationError(field, `${field} must be a fraction between 0 and 1 with at most 4 decimals`);
  return `${match[1]}.${(match[2] ?? '').padEnd(4, '0')}`;
}
