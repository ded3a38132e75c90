import { describe, expect, it } from 'vitest';
import { keptName, namesOfHolder, refuseOverlongNames } from '../../domain/payments/person-name.ts';

describe('names as they are kept and searched', () => {
  it('are trimmed and composed (NFC); blank is no name', () => {
    expect(keptName(' Ada\t')).toBe('Ada');
    expect(keptName('Lo\u0301pez')).toBe('L\u00f3pez');
    expect(keptName('   ')).toBeUndefined();
    expect(keptName(undefined)).toBeUndefined();
  });

  it("split a cardholder's name into its first word and the rest, whatever the spaces", () => {
    expect(namesOfHolder('Ada King Lovelace')).toEqual({ firstName: 'Ada', lastName: 'King Lovelace' });
    expect(namesOfHolder('  Ada   Lovelace ')).toEqual({ firstName: 'Ada', lastName: 'Lovelace' });
    expect(namesOfHolder('Cher')).toEqual({ firstName: 'Cher', lastName: undefined });
    expect(namesOfHolder(' ')).toEqual({ firstName: undefined, lastName: undefined });
  });

  it('are refused when longer than 100 characters once composed, naming the field (NFC writes U+FB2C as three)', () => {
    expect(() => refuseOverlongNames({ 'card.name': 'a'.repeat(99) + '\uFB2C' })).toThrow(expect.objectContaining({ code: 'validation', details: { field: 'card.name' } }));
    expect(() => refuseOverlongNames({ 'address.firstName': ' ' + 'é'.repeat(100) + ' ' })).not.toThrow();
    expect(() => refuseOverlongNames({ 'address.firstName': 'e\u0301'.repeat(100) })).not.toThrow();
    expect(() => refuseOverlongNames({ 'address.lastName': undefined, 'address.firstName': '\u{1F600}'.repeat(100) })).not.toThrow();
  });
});
