/**
 * Cursors of keyset pages: opaque to clients, base64url of `[list, ...position]`. The list's name is part of the
 * cursor because several lists page by positions of the same shape (a timestamp and a UUID): without it a cursor of
 * one list sent to another read as a position there and answered a shifted or empty page, where a client that mixed
 * up its cursors should be told so.
 */
export function encodeKeysetCursor(list: string, position: readonly string[]): string {
  return Buffer.from(JSON.stringify([list, ...position])).toString('base64url');
}

/** Longest cursor any list gives out, with room to spare; longer text is not parsed at all. */
const LONGEST_CURSOR = 300;

/**
 * The position a cursor of `list` names (`parts` strings), or undefined when the text is no cursor this list gave
 * out. Each list checks the parts' own shapes, since they go into SQL casts.
 */
export function decodeKeysetCursor(list: string, text: string, parts: number): string[] | undefined {
  if (text.length > LONGEST_CURSOR) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== parts + 1 || value[0] !== list) return undefined;
  const position = value.slice(1);
  return position.every((part): part is string => typeof part === 'string') ? position : undefined;
}
