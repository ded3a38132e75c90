import { describe, expect, it } from 'vitest';
import { keptName, namesOfHolder } from '../../domain/payments/person-name.ts';

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
});
