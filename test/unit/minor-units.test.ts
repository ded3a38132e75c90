import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amountProblemIn, currencyDecimals, fromMinorUnits, toMinorUnits } from '../../domain/payments-api/minor-units.ts';

describe('minor units of the /payments API', () => {
  it("reads an amount in the currency's own minor units: hundredths, whole yen, thousandths of a dinar", () => {
    expect(fromMinorUnits(1999, 'USD')).toBe('19.99');
    expect(fromMinorUnits(5, 'EUR')).toBe('0.05');
    expect(fromMinorUnits(500, 'JPY')).toBe('500.00');
    expect(fromMinorUnits(1, 'KRW')).toBe('1.00');
    expect(fromMinorUnits(1230, 'KWD')).toBe('1.23');
    expect(fromMinorUnits(10, 'BHD')).toBe('0.01');
    expect([currencyDecimals('USD'), currencyDecimals('JPY'), currencyDecimals('KWD')]).toEqual([2, 0, 3]);
    // Three decimals as ISO 4217 says, though Stripe does not take them: 1000 is one dinar, not ten.
    expect([fromMinorUnits(1000, 'IQD'), fromMinorUnits(1000, 'LYD')]).toEqual(['1.00', '1.00']);
  });

  it('answers each stored amount back in the same units', () => {
    expect(toMinorUnits('19.99', 'USD')).toBe(1999);
    expect(toMinorUnits('500.00', 'JPY')).toBe(500);
    expect(toMinorUnits('1.23', 'KWD')).toBe(1230);
    expect(toMinorUnits('0.00', 'JPY')).toBe(0);
  });

  it('round-trips every amount it takes, exactly, in every kind of currency', () => {
    const currency = fc.constantFrom('USD', 'EUR', 'JPY', 'KRW', 'CLP', 'KWD', 'TND', 'ISK');
    fc.assert(
      fc.property(currency, fc.integer({ min: 1, max: 99_999_999_999_99 }), (code, minor) => {
        const amount = currencyDecimals(code) === 3 ? minor * 10 : code === 'ISK' ? Math.floor(minor / 100) * 100 || 100 : minor;
        let stored: string;
        try {
          stored = fromMinorUnits(amount, code);
        } catch {
          // Only amounts past 99,999,999,999.99 of the currency are refused.
          return currencyDecimals(code) === 0 && amount > 99_999_999_999;
        }
        return /^\d{1,11}\.\d{2}$/.test(stored) && toMinorUnits(stored, code) === amount;
      }),
    );
  });

  it('refuses what the gateway cannot charge exactly, naming the field', () => {
    expect(() => fromMinorUnits(1234, 'KWD')).toThrow('amount in KWD must end in 0: the gateway charges whole hundredths (1230 for 1.230 KWD)');
    expect(() => fromMinorUnits(0, 'JPY', 'amount')).toThrow('amount must be a positive integer in minor units (500 for 500 JPY)');
    expect(() => fromMinorUnits(1.5, 'USD')).toThrow('amount must be a positive integer in minor units (1999 for 19.99 USD)');
    expect(() => fromMinorUnits(100_000_000_000, 'JPY')).toThrow('amount must be at most 99999999999 JPY');
    expect(fromMinorUnits(99_999_999_999, 'JPY')).toBe('99999999999.00');
    // ISK is two-decimal in minor units (Stripe's), but only whole krónur can be paid: 150 would be 1.50 ISK.
    expect(() => fromMinorUnits(150, 'ISK')).toThrow('amount in ISK must end in 00: ISK is charged in whole units (50000 for 500 ISK)');
    expect(fromMinorUnits(50_000, 'ISK')).toBe('500.00');
    expect(() => fromMinorUnits(99_999_999_999_99, 'ISK')).toThrow('amount in ISK must end in 00');
    expect(() => fromMinorUnits(100_000_000_000_00, 'ISK')).toThrow('amount must be at most 99999999999 ISK, that is 9999999999900 in minor units');
    // MGA is zero-decimal, as Stripe and the card schemes take it (ISO 4217 says 2).
    expect(fromMinorUnits(1000, 'MGA')).toBe('1000.00');
    expect(() => fromMinorUnits(99_999_999_999_99 + 1, 'USD')).toThrow('at most');
  });

  it('names a price a currency without a minor unit cannot be charged', () => {
    expect(amountProblemIn('19.99', 'JPY')).toBe('must be a whole amount in JPY (it has no minor unit)');
    expect(amountProblemIn('500.00', 'JPY')).toBeUndefined();
    expect(amountProblemIn('500', 'JPY')).toBeUndefined();
    expect(amountProblemIn('19.99', 'USD')).toBeUndefined();
    expect(amountProblemIn('1.23', 'KWD')).toBeUndefined();
    expect(amountProblemIn('1.50', 'ISK')).toBe('must be a whole amount in ISK (it is charged in whole units)');
    expect(amountProblemIn('500.00', 'ISK')).toBeUndefined();
  });
});

describe('amounts stored before minor units were the currency\'s own', () => {
  it('shows a zero-decimal amount with cents rounded half up to the whole unit, never failing the answer', () => {
    expect(toMinorUnits('19.99', 'JPY')).toBe(20);
    expect(toMinorUnits('19.49', 'JPY')).toBe(19);
    expect(toMinorUnits('19.50', 'JPY')).toBe(20);
    expect(amountProblemIn('500.0', 'JPY')).toBeUndefined();
  });
});
