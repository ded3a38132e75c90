import { decodeKeysetCursor, encodeKeysetCursor } from '../validation/keyset-cursor.ts';
import { isCursorTimestamp } from '../validation/timestamps.ts';
import type { EmailCursor } from './email-record.ts';

export const EMAIL_PAGE_SIZE = { default: 50, max: 100 } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function encodeEmailCursor(cursor: EmailCursor): string {
  return encodeKeysetCursor('emails', [cursor.createdAt, cursor.id]);
}

/**
 * The position a cursor names, or undefined when it is not one this API gave out. Strict, because the values go
 * into SQL casts (`::timestamptz`, `::uuid`): anything a cast would refuse must be refused here as bad input.
 */
export function decodeEmailCursor(text: string): EmailCursor | undefined {
  const [createdAt, id] = decodeKeysetCursor('emails', text, 2) ?? [];
  if (createdAt === undefined || id === undefined || !isCursorTimestamp(createdAt) || !UUID.test(id)) return undefined;
  return { createdAt, id };
}
