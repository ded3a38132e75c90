import { describe, it, expect } from 'vitest';

import { STATUS_CODES, STATUS_GROUPS, statusById } from '../domain/statuses/status-codes.ts';
import { parseSpecStatusCodes, readSpec } from './support/spec-status-codes.ts';

const parsed = parseSpecStatusCodes(readSpec());

describe('status codes reference (spec 7.5)', () => {
  it('has the same number of codes as the spec', () => {
    expect(STATUS_CODES.length, 'STATUS_CODES length vs spec 7.5').toBe(parsed.length);
  });

  it('lists the codes in spec order', () => {
    expect(STATUS_CODES.map((c) => c.id)).toEqual(parsed.map((c) => c.id));
  });

  it.each(parsed.map((spec, index) => ({ id: spec.id, index, spec })))(
    'code $id matches the spec',
    ({ id, index, spec }) => {
      const literal = statusById(id);
      expect(literal, `code ${id} is in spec 7.5 but missing from STATUS_CODES`).toBeDefined();
      expect(literal!.status, `code ${id}: status`).toBe(spec.status);
      expect(literal!.group, `code ${id}: group`).toBe(spec.group);
      expect(literal!.isGatewayLevelStatus, `code ${id}: isGatewayLevelStatus`).toBe(spec.isGatewayLevelStatus);
      expect(STATUS_CODES[index]?.id, `code ${id}: position ${index} in STATUS_CODES`).toBe(id);
    },
  );

  it('has no codes that are absent from the spec', () => {
    const specIds = new Set(parsed.map((c) => c.id));
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
    expect(new Set(parsed.map((c) => c.id)).size, 'duplicate ids in spec 7.5').toBe(parsed.length);
  });

  it.each([...STATUS_GROUPS])('group %s is non-empty', (group) => {
    expect(STATUS_CODES.filter((c) => c.group === group).length, `group ${group} in STATUS_CODES`).toBeGreaterThan(0);
    expect(parsed.filter((c) => c.group === group).length, `group ${group} in spec 7.5`).toBeGreaterThan(0);
  });

  it('has 1789 as the only gateway-level status', () => {
    expect(statusById(1789)).toEqual({ id: 1789, status: 'Submitted', group: 'other', isGatewayLevelStatus: true });
    expect(STATUS_CODES.filter((c) => c.isGatewayLevelStatus).map((c) => c.id)).toEqual([1789]);
  });

  it('maps 0 to None without the spec annotation', () => {
    expect(statusById(0)?.status).toBe('None');
  });
});
