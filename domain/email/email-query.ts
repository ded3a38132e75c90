import { isCursorTimestamp } from '../validation/timestamps.ts';
import type { EmailCursor } from './email-record.ts';

export const EMAIL_PAGE_SIZE = { default: 50, max: 100 } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
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
