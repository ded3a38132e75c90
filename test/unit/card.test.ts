import { describe, expect, it } from 'vitest';
import { binCountry, cvvLengthFor, detectNetwork, expiryFieldAtFault, isValidCardNumber, isValidEmail, isValidExpiry, normalizeEmail, normalizeExpiryYear, passesLuhn } from '../../domain/payments/card.ts';

describe('Luhn check', () => {
  it.each([
    ['79927398713', true],
    ['79927398710', false],
    ['4242424242424242', true],
    ['4242424242424241', false],
    ['5555555555554444', true],
    ['378282246310005', true],
    ['378282246310006', false],
  ])('%s passes: %s', (digits, expected) => {
    expect(passesLuhn(digits)).toBe(expected);
  });
});

describe('card network from the BIN', () => {
  it.each([
    ['4242424242424242', 'NetworkA'],
    ['4000000000006', 'NetworkA'],
    ['5100000000000008', 'NetworkB'],
    ['5555555555554444', 'NetworkB'],
    ['2221000000000009', 'NetworkB'],
    ['2720000000000005', 'NetworkB'],
    ['340000000000009', 'NetworkC'],
    ['378282246310005', 'NetworkC'],
    ['6011000000000004', 'NetworkD'],
    ['6500000000000002', 'NetworkD'],
    ['6440000000000005', 'NetworkD'],
    ['6490000000000004', 'NetworkD'],
    ['3528000000000007', 'NetworkE'],
    ['3589000000000003', 'NetworkE'],
  ])('%s is %s', (pan, network) => {
    expect(detectNetwork(pan)).toBe(network);
  });

  it.each([
    ['5000000000000009', '50 is below the NetworkB range 51-55'],
    ['5600000000000003', '56 is above the NetworkB range 51-55'],
    ['2220000000000000', '2220 is below the NetworkB range 2221-2720'],
    ['2721000000000004', '2721 is above the NetworkB range 2221-2720'],
    ['6430000000000007', '643 is below the NetworkD range 644-649'],
    ['3527000000000008', '3527 is below the NetworkE range 3528-3589'],
    ['3590000000000000', '3590 is above the NetworkE range 3528-3589'],
    ['1000000000000008', 'no network starts with 1'],
  ])('%s has no network (%s)', (pan) => {
    expect(detectNetwork(pan)).toBeUndefined();
  });

  it('asks a 4-digit CVV for NetworkC only, 3 digits otherwise', () => {
    expect(cvvLengthFor('NetworkC')).toBe(4);
    for (const network of ['NetworkA', 'NetworkB', 'NetworkD', 'NetworkE'] as const) expect(cvvLengthFor(network), network).toBe(3);
    expect(cvvLengthFor(undefined)).toBe(3);
  });
});

describe('card number validation', () => {
  it.each([
    ['4242424242424242', 'NetworkA, 16 digits'],
    ['4000000000006', 'NetworkA, 13 digits'],
    ['4000000000000000006', 'NetworkA, 19 digits'],
    ['378282246310005', 'NetworkC, 15 digits'],
    ['100000000008', 'no known network, 12 digits'],
    ['2220000000000000', 'no known network, 16 digits'],
  ])('accepts %s (%s)', (pan) => {
    expect(isValidCardNumber(pan)).toBe(true);
  });

  it.each([
    ['4242424242424241', 'fails Luhn'],
    ['400000000000006', 'NetworkA with 15 digits'],
    ['400000000002', 'NetworkA with 12 digits'],
    ['510000000000003', 'NetworkB with 15 digits'],
    ['5555555555554444'.slice(0, 11), '11 digits'],
    ['90000000000000000001', '20 digits'],
    ['4242 4242 4242 4242', 'spaces (the caller strips them first)'],
    ['424242424242424a', 'a letter'],
    ['', 'empty'],
  ])('refuses %s (%s)', (pan) => {
    expect(isValidCardNumber(pan)).toBe(false);
  });
});

describe('expiry', () => {
  const midJune2025 = new Date('2025-06-15T12:00:00Z');

  it.each([
    [6, 2025, 'this month'],
    [6, 25, 'this month, 2-digit year'],
    [7, 2025, 'next month'],
    [1, 2026, 'next year'],
    [12, 2050, 'the last year accepted, 25 years ahead'],
    [12, 50, '2-digit year 50 is 2050'],
  ])('%i/%i is valid (%s)', (month, year) => {
    expect(isValidExpiry(month, year, midJune2025)).toBe(true);
  });

  it.each([
    [5, 2025, 'last month'],
    [5, 25, 'last month, 2-digit year'],
    [12, 2024, 'last year'],
    [1, 2051, 'more than 25 years ahead'],
    [6, 99, '2-digit year 99 is 2099'],
    [0, 2030, 'month zero'],
    [13, 2030, 'month 13'],
    [6, 0, 'year zero'],
    [undefined, 2030, 'month missing'],
    [6, undefined, 'year missing'],
    [6.5, 2030, 'fractional month'],
    [6, 202, 'a 3-digit year'],
  ])('%s/%s is invalid (%s)', (month, year, _why) => {
    expect(isValidExpiry(month, year, midJune2025)).toBe(false);
  });

  it.each([
    [5, 2025, 'month', 'last month'],
    [5, 25, 'month', 'last month, 2-digit year'],
    [0, 2030, 'month', 'month zero'],
    [13, 2030, 'month', 'month 13'],
    [undefined, 2030, 'month', 'month missing'],
    [12, 2024, 'year', 'last year'],
    [1, 2051, 'year', 'more than 25 years ahead'],
    [6, 0, 'year', 'year zero'],
    [6, undefined, 'year', 'year missing'],
    [6, 202, 'year', 'a 3-digit year'],
    [undefined, undefined, 'year', 'both missing'],
  ])('%s/%s names its %s as at fault (%s)', (month, year, field, _why) => {
    expect(expiryFieldAtFault(month, year, midJune2025)).toBe(field);
  });

  it('a card is good through the last instant of its month, in UTC', () => {
    expect(isValidExpiry(6, 2025, new Date('2025-06-30T23:59:59.999Z'))).toBe(true);
    expect(isValidExpiry(6, 2025, new Date('2025-07-01T00:00:00.000Z'))).toBe(false);
  });

  it('normalises a 2-digit year to 20xx and keeps a 4-digit one', () => {
    expect(normalizeExpiryYear(27)).toBe(2027);
    expect(normalizeExpiryYear(5)).toBe(2005);
    expect(normalizeExpiryYear(2031)).toBe(2031);
  });
});

describe('BIN country', () => {
  it('knows the sandbox BINs, longest prefix first, and nothing else', () => {
    expect(binCountry('40000007')).toBe('BR');
    expect(binCountry('40000000')).toBe('US');
    expect(binCountry('42424242')).toBe('US');
    expect(binCountry('55555555')).toBe('US');
    expect(binCountry('41111111')).toBeUndefined();
  });
});

describe('e-mail', () => {
  it.each([
    ['ada@example.com', true],
    ['a.b+tag@sub.example.co', true],
    ['ada@example.c', false],
    ['ada@example', false],
    ['ada example@example.com', false],
    ['@example.com', false],
    ['ada@@example.com', false],
    ['', false],
    // Invisible characters would make a blocklisted address another one.
    ['blocked@example.com\u200b', false],
    ['blo\u00adcked@example.com', false],
    ['blocked\u2060@example.com', false],
    ['blocked@exa\u200dmple.com', false],
    ['blocked@example.com\u00a0', false],
    ['bl\u0007ocked@example.com', false],
    // One form of each character: composed é only.
    ['jos\u00e9@example.com', true],
    ['jose\u0301@example.com', false],
    ['用户@例子.广告', true],
    ["o'brien!#$%&*+/=?^_`{|}~-@example.com", true],
    // One spelling of a domain: the one normalizeEmail writes (below), never its punycode or a fullwidth form.
    ['ada@bücher.example', true],
    ['ada@xn--bcher-kva.example', false],
    ['ada@ｅxample.com', false],
    ['ada@mail-1.example.co.uk', true],
    // Other spellings of one mailbox, or no mailbox at all: each would pass the blocklist, velocity and
    // one-subscription checks as another address.
    ['bad@x.co.', false],
    ['bad@x.co..', false],
    ['bad(x)@x.co', false],
    ['"bad"@x.co', false],
    ['bad@[192.0.2.1]', false],
    ['a@x..co', false],
    ['a@.x.co', false],
    ['a@-x.co', false],
    ['a@x-.co', false],
    ['a@x.co-', false],
    ['a..b@x.co', false],
    ['.a@x.co', false],
    ['a.@x.co', false],
    ['a@x_y.co', false],
    ['a@x!.co', false],
    // A mailbox name is at most 64 octets: UTF-8 ones counted in bytes.
    [`${'a'.repeat(64)}@example.com`, true],
    [`${'a'.repeat(65)}@example.com`, false],
    [`${'é'.repeat(32)}@example.com`, true],
    [`${'é'.repeat(33)}@example.com`, false],
  ])('%j valid: %s', (email, expected) => {
    expect(isValidEmail(email)).toBe(expected);
  });

  it('writes each domain in one spelling, so one mailbox is one address for the blocklist, velocity and subscriptions', () => {
    const spellings = ['Bad@Bücher.de', 'bad@xn--bcher-kva.de', 'bad@ｂücher.de', ' BAD@XN--BCHER-KVA.DE '];
    expect(new Set(spellings.map(normalizeEmail))).toEqual(new Set(['bad@bücher.de']));
    expect(normalizeEmail('a@ｅｘａｍｐｌｅ.com')).toBe('a@example.com');
    for (const spelling of spellings) expect(isValidEmail(normalizeEmail(spelling)), spelling).toBe(true);
  });

  it('allows 320 characters and no more', () => {
    // The longest mailbox name, then labels of a domain filling the rest.
    const local = `${'a'.repeat(64)}@`;
    const labels = (length: number) => `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(length - 196)}.com`;
    expect(isValidEmail(local + labels(320 - local.length))).toBe(true);
    expect(isValidEmail(local + labels(321 - local.length))).toBe(false);
    expect(isValidEmail(undefined)).toBe(false);
  });
});
