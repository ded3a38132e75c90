import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isExactlyWhole } from '../../api/http/whole-numbers.ts';

/** What JSON.parse reads a number's text as. */
const read = (text: string) => JSON.parse(text) as number;

describe('a JSON number that is exactly the whole number it reads as', () => {
  it('is any safe integer, however written: plain, with zero decimals, in exponent form, or with leading zeros in its fraction', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(0, -1, 1), fc.maxSafeInteger()), fc.integer({ min: 0, max: 5 }), (n, zeros) => {
        const sign = n < 0 ? '-' : '';
        const digits = String(Math.abs(n));
        const scientific = `${sign}${digits[0]}.${digits.slice(1) || '0'}e${digits.length - 1}`;
        const shifted = n === 0 ? '0e-2' : `${sign}${digits}00e-2`;
        for (const text of [`${sign}${digits}`, `${sign}${digits}.${'0'.repeat(zeros + 1)}`, `${sign}${digits}e0`, shifted, scientific]) {
          expect(isExactlyWhole(text, read(text)), text).toBe(true);
        }
      }),
    );
  });

  it('is never a number with a fraction that rounds away, nor an integer past what a double holds', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger().filter((n) => n !== 0), fc.stringMatching(/^[0-9]{0,20}[1-9]$/), (n, fraction) => {
        const text = `${n}.${'0'.repeat(20)}${fraction}`;
        // 20 zeros first: the double cannot hold the fraction, so the text reads as the whole number n (0.000…1 is a
        // double of its own, no whole number).
        expect(Number.isInteger(read(text))).toBe(true);
        expect(isExactlyWhole(text, read(text)), text).toBe(false);
      }),
    );
    for (const text of ['999.99999999999999999', '9007199254740993', '12345678901234567890', '1e-400', '-1e-400']) {
      expect(Number.isInteger(read(text)), text).toBe(true);
      expect(isExactlyWhole(text, read(text)), text).toBe(false);
    }
    for (const text of ['9007199254740992', '1e21', '-0', '0.0e-999', '100e-2']) expect(isExactlyWhole(text, read(text)), text).toBe(true);
  });
});
