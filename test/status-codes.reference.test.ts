import { describe, it, expect } from 'vitest';

import { STATUS_CODES, STATUS_GROUPS, statusById } from '../domain/statuses/status-codes.ts';
import { GROUP_FLAG, SPEC_STATUS_CODES, specGroupOf } from './support/spec-status-codes.ts';

/**
 * The product's hand-written status table (domain/statuses/status-codes.ts) against the independent copy
 * of spec 7.5 in test/fixtures/interface-status-codes.json.
 */

describe('the spec 7.5 copy used as test data', () => {
  it('holds 251 codes: 6 successful, 105 issuer declines, 7 insufficient funds, 33 invalid card details, 100 other', () => {
    const count = (flag: keyof (typeof SPEC_STATUS_CODES)[number]) => SPEC_STATUS_CODES.filter((c) => c[flag] === true).length;
    expect(SPEC_STATUS_CODES).toHaveLength(251);
    expect([count('successful'), count('isIssuerDecline'), count('isInsufficientFunds'), count('isInvalidCardDetails'), count('isOther')]).toEqual([6, 105, 7, 33, 100]);
  });

  it('gives every code exactly one group and a unique id', () => {
    for (const code of SPEC_STATUS_CODES) expect(() => specGroupOf(code), `code ${code.id}`).not.toThrow();
    expect(new Set(SPEC_STATUS_CODES.map((c) => c.id)).size).toBe(SPEC_STATUS_CODES.length);
  });
});

describe('status codes reference (spec 7.5)', () => {
  it('has the same number of codes as the spec', () => {
    expect(STATUS_CODES.length, 'STATUS_CODES length vs spec 7.5').toBe(SPEC_STATUS_CODES.length);
  });

  it('lists the codes in spec order', () => {
    expect(STATUS_CODES.map((c) => c.id)).toEqual(SPEC_STATUS_CODES.map((c) => c.id));
  });

  it.each(SPEC_STATUS_CODES.map((spec, index) => ({ id: spec.id, index, spec })))('code $id matches the spec', ({ id, index, spec }) => {
    const literal = statusById(id);
    expect(literal, `code ${id} is in spec 7.5 but missing from STATUS_CODES`).toBeDefined();
    expect(literal!.status, `code ${id}: status`).toBe(spec.status);
    expect(literal!.group, `code ${id}: group`).toBe(specGroupOf(spec));
    expect(literal!.isGatewayLevelStatus, `code ${id}: isGatewayLevelStatus`).toBe(spec.isGatewayLevelStatus);
    expect(STATUS_CODES[index]?.id, `code ${id}: position ${index} in STATUS_CODES`).toBe(id);
  });

  it('has no codes that are absent from the spec', () => {
    const specIds = new Set(SPEC_STATUS_CODES.map((c) => c.id));
    const extra = STATUS_CODES.filter((c) => !specIds.has(c.id)).map((c) => c.id);
    expect(extra, `codes in STATUS_CODES but not in spec 7.5: ${extra.join(', ')}`).toEqual([]);
  });

  it('has unique ids', () => {
    const seen = new Set<number>();
    const duplicates: number[] = [];
    for (const { id } of STATUS_CODES) {
      if (seen.has(id)) duplicates.push(id);
      seen.add(id);
    }
    expect(duplicates, `duplicate ids in STATUS_CODES: ${duplicates.join(', ')}`).toEqual([]);
  });

  it.each([...STATUS_GROUPS])('group %s holds the codes the spec lists under it', (group) => {
    const literal = STATUS_CODES.filter((c) => c.group === group).map((c) => c.id);
    const spec = SPEC_STATUS_CODES.filter((c) => c[GROUP_FLAG[group]]).map((c) => c.id);
    expect(literal.length).toBeGreaterThan(0);
    expect(literal).toEqual(spec);
  });

  it('has 1789 Submitted as the only gateway-level status', () => {
    expect(statusById(1789)).toEqual({ id: 1789, status: 'Submitted', group: 'other', isGatewayLevelStatus: true });
    expect(STATUS_CODES.filter((c) => c.isGatewayLevelStatus).map((c) => c.id)).toEqual([1789]);
  });

  it('maps 0 to None without the spec annotation', () => {
    expect(statusById(0)).toEqual({ id: 0, status: 'None', group: 'other', isGatewayLevelStatus: false });
  });

  it('answers undefined for a code the spec does not list', () => {
    expect(statusById(1)).toBeUndefined();
    expect(statusById(9999)).toBeUndefined();
  });
});
