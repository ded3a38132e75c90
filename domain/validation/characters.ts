/**
 * Whether a text holds at most `max` characters, counted as PostgreSQL's `varchar(n)` and JSON Schema's `maxLength`
 * count them: code points, so an emoji (two UTF-16 units) is one. Stops counting past `max`: a huge text costs no more
 * than a short one.
 */
export function fitsCharacters(text: string, max: number): boolean {
  // A code point takes one or two UTF-16 units: the unit count bounds the character count on both sides.
  if (text.length <= max) return true;
  if (text.length > 2 * max) return false;
  let characters = 0;
  for (const _ of text) if (++characters > max) return false;
  return true;
}
