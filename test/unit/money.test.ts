import { describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/errors.ts';
import { toFractionString, toMoneyString } from '../../domain/money.ts';

function failure(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a failure');
}

describe('amounts (toMoneyString)', () => {
  it.each([
    [29.9, '29.90'],
    ['0.07', '0.07'],
    [100, '100.00'],
    [0, '0.00'],
    ['0', '0.00'],
    ['0012.5', '12.50'],
    [19.99, '19.99'],
    ['999999999999.99', '999999999999.99'],
  ])('%s becomes %s, by text and never by float arithmetic', (input, expected) => {
    expect(toMoneyString(input, 'amount')).toBe(expected);
  });

  it.each([
    ['1.234', 'three decimals'],
    [1.005, 'three decimals as a number'],
    [0.1 + 0.2, 'a float artefact (0.30000000000000004)'],
    ['1000000000000', 'thirteen integer digits'],
    [-1, 'negative'],
    ['-0.01', 'negative text'],
    [1e21, 'exponent notation'],
    [1e-7, 'tiny exponent notation'],
    ['1,00', 'a decimal comma'],
    ['.5', 'no integer part'],
    ['5.', 'a trailing point'],
    [' 5', 'a leading space'],
    ['', 'empty'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
  ])('rejects %s (%s) as a validation error naming the field', (input, _why) => {
    const error = failure(() => toMoneyString(input as number, 'price'));
    expect(error).toBeInstanceOf(DomainError);
    expect(error.code).toBe('validation');
    expect(error.details.field).toBe('price');
    expect(error.message).toBe('price must be an amount from 0 to 999999999999.99 with at most 2 decimals');
  });
});

describe('fractions (toFractionString)', () => {
  it.each([
    [0.1, '0.1000'],
    ['0.1234', '0.1234'],
    [0, '0.0000'],
    ['1', '1.0000'],
    ['1.0000', '1.0000'],
    [1, '1.0000'],
  ])('%s becomes %s', (input, expected) => {
    expect(toFractionString(input, 'reserve')).toBe(expected);
  });

  it.each([['1.5'], ['1.0001'], [2], ['0.12345'], [-0.1], ['.5'], ['abc']])('rejects %s naming the field', (input) => {
    const error = failure(() => toFractionString(input as string, 'reservePercentage'));
    expect(error.code).toBe('validation');
    expect(error.details.field).toBe('reservePercentage');
  });
});
