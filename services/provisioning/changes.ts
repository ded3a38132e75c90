import { isDeepStrictEqual } from 'node:util';

export type ChangeKind = 'created' | 'updated' | 'unchanged';

/** Assigns only differing values, so an unchanged record is not written (idempotency). */
export function assignChanges<T extends object>(entity: T, values: Record<string, unknown>): ChangeKind {
  let changed = false;
  for (const [key, value] of Object.entries(values)) {
    const current = (entity as Record<string, unknown>)[key];
    if (!sameValue(current, value)) {
      (entity as Record<string, unknown>)[key] = value;
      changed = true;
    }
  }
  return changed ? 'updated' : 'unchanged';
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a === b) return true;
  if (a === undefined || a === null) return b === undefined || b === null;
  // jsonb does not keep key order, so compare structurally.
  return isDeepStrictEqual(a, b);
}
