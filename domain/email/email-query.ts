import type { EmailCursor } from './email-record.ts';

export const EMAIL_PAGE_SIZE = { default: 50, max: 100 } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** `created_at::text` as PostgreSQL prints a timestamptz: `2026-11-23 10:15:00.123456+00` (or `T`, `Z`, `+05:30`). */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-]\d{2}(:?\d{2})?)$/;

/** A timestamp PostgreSQL takes as `timestamptz`: the exact shape above, with a real calendar date and time of day. */
function isCursorTimestamp(text: string): boolean {
  const match = TIMESTAMP.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59;
}

/** Opaque to callers: base64url of the last row's position. */
export function encodeEmailCursor(cursor: EmailCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}

/**
 * The position a cursor names, or undefined when it is not one this API gave out. Strict, because the values go
 * into SQL casts (`::timestamptz`, `::uuid`): anything a cast would refuse must be refused here as bad input.
 */
export function decodeEmailCursor(text: string): EmailCursor | undefined {
  if (text.length > 200) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [createdAt, id] = value as unknown[];
    if (typeof createdAt !== 'string' || !isCursorTimestamp(createdAt) || typeof id !== 'string' || !UUID.test(id)) return undefined;
    return { createdAt, id };
  } catch {
    return undefined;
  }
}
