/**
 * Text PostgreSQL cannot store or that is not Unicode: a NUL byte, or half of a surrogate pair (JSON can
 * carry both as `\u0000` and `\ud800`). Such text is refused where it enters, naming the field, so it never
 * reaches a query or a workflow that would fail on it.
 */
export function isHostileText(text: string): boolean {
  return text.includes('\u0000') || !text.isWellFormed();
}

/** What makes a value hostile: text PostgreSQL cannot store, a number JSON cannot carry, or a query parameter given more than once. */
export type HostileKind = 'text' | 'number' | 'repeated' | 'encoding';

/**
 * A number JSON cannot carry: `1e309` parses to Infinity, which passes a `number` check and which every JSON writer
 * then turns into `null` (an e-mail reading "USD null", a stored field gone).
 */
export function isUnrepresentableNumber(value: unknown): boolean {
  return typeof value === 'number' && !Number.isFinite(value);
}

/**
 * The path (`card.name`, `props[key]`, `scans[2].page`) of the first hostile string, key or value, or number, in a
 * parsed value, and which it is.
 */
export function findHostileValue(value: unknown, root: string): { path: string; kind: HostileKind } | undefined {
  const pending: { value: unknown; path: string }[] = [{ value, path: root }];
  // Iterative: a deeply nested body cannot overflow the stack.
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === 'string') {
      if (isHostileText(current)) return { path, kind: 'text' };
    } else if (isUnrepresentableNumber(current)) {
      return { path, kind: 'number' };
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, path: `${path}[${index}]` }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const child = path === '' ? key : `${path}.${key}`;
        if (isHostileText(key)) return { path: path === '' ? 'a field name' : `a field name in ${path}`, kind: 'text' };
        pending.push({ value: item, path: child });
      }
    }
  }
  return undefined;
}

/** Why a hostile value is refused, for the sentence that names it. */
export const HOSTILE_VALUE_PROBLEM: Record<HostileKind, string> = {
  text: 'must not contain NUL bytes or unpaired surrogates',
  number: 'must be a number JSON can hold (this one is beyond ±1.8e308)',
  repeated: 'is given more than once; give it once',
  encoding: 'must be percent-encoded UTF-8 (an escape here is no UTF-8, or a `%` escapes nothing)',
};

/**
 * Text from outside that is only kept for people to read (a webhook receiver's answer, an error message): cut to
 * `maxLength` without splitting a surrogate pair, with NUL bytes and broken surrogates replaced by U+FFFD, so
 * PostgreSQL takes it. Refusing is for input; text we merely record is made storable instead.
 */
export function storableText(text: string, maxLength: number): string {
  let cut = text.slice(0, maxLength);
  // A pair cut in half by the slice leaves its high surrogate at the end.
  if (/[\ud800-\udbff]$/.test(cut) && /[\udc00-\udfff]/.test(text.charAt(maxLength))) cut = cut.slice(0, -1);
  return cut.toWellFormed().replaceAll('\u0000', '\ufffd');
}
