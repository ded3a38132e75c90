import { describe, expect, it } from 'vitest';
import { parseMitigationFilter } from '../../domain/mitigation/search.ts';

describe('the mitigation search e-mail filter', () => {
  it('finds an address in any spelling of it, as payments keep it: lower case, one spelling of the domain', () => {
    const { emails } = parseMitigationFilter({ emails: [' Buyer@XN--BCHER-KVA.example ', 'buyer@bücher.example', 'BUYER@ｂücher.example'] });
    expect(emails).toEqual(['buyer@bücher.example']);
  });
});
