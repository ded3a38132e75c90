/**
 * Text PostgreSQL cannot store or that is not Unicode: a NUL byte, or half of a surrogate pair (JSON can
 * carry both as `\u0000` and `\ud800`). Such text is refused where it enters, naming the field, so it never
 * reaches a query or a workflow that would fail on it.
 */
export function isHostileText(text: string): boolean {
  return text.includes('\u0000') || !text.isWellFormed();
}

/** The path (`card.name`, `props[key]`, `scans[2].page`) of the first hostile string, key or value, in a parsed value. */
export function findHostileText(value: unknown, root: string): string | undefined {
  const pending: { value: unknown; path: string }[] = [{ value, path: root }];
  // Iterative: a deeply nested body cannot overflow the stack.
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === 'string') {
      if (isHostileText(current)) return path;
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, path: `${path}[${index}]` }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const child = path === '' ? key : `${path}.${key}`;
        if (isHostileText(key)) return path === '' ? 'a field name' : `a field name in ${path}`;
        pending.push({ value: item, path: child });
      }
    }
  }
  return undefined;
}
