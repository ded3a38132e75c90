/** How deep `value` nests objects and arrays (a scalar is 0), counted without recursion; stops past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (next.value === null || typeof next.value !== 'object') continue;
    const depth = next.depth + 1;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Object.values(next.value)) pending.push({ value: child, depth });
  }
  return deepest;
}
