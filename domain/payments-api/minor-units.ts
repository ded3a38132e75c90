import { validationError } from '../errors.ts';

/**
 * The generic `/payments` API speaks in minor units (integers: 1999 is 19.99), the rest of the gateway in
 * two-decimal strings. Both conversions work on text, never floats. Every currency is stored with two decimals
 * (the processors take two-decimal strings), so one minor unit is always a hundredth.
 */
export const MAX_MINOR_AMOUNT = 99_999_999_999_99;

export function fromMinorUnits(amount: number, field = 'amount'): string {
  if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_MINOR_AMOUNT) throw validationError(field, `${field} must be a positive integer in minor units (1999 for 19.99)`);
  const digits = String(amount).padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

export function toMinorUnits(amount: string): number {
  const match = /^(\d+)\.(\d{2})$/.exec(amount);
  if (!match) throw new Error(`Not a two-decimal amount: ${amount}`);
  return Number(BigInt(match[1]!) * 100n + BigInt(match[2]!));
}
