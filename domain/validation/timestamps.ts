/**
 * The years a date filter may name. PostgreSQL holds no year 0, and JavaScript writes years past 9999 in a form
 * (`+010000-…`) it cannot read; the bounds keep every accepted date (and the day after it) inside both.
 */
export const SEARCH_YEARS = { min: 1970, max: 9998 } as const;

/** A date filter's instant is within `SEARCH_YEARS` (in UTC, as it is sent to PostgreSQL). */
export function isSearchableInstant(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(year) && year >= SEARCH_YEARS.min && year <= SEARCH_YEARS.max;
}

/** `…::text` as PostgreSQL prints a timestamptz: `2026-11-23 10:15:00.123456+00` (or `T`, `Z`, `+05:30`). */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(?:Z|[+-](\d{2})(?::?(\d{2}))?)$/;
/** The widest offset from UTC PostgreSQL takes in a timestamp (`+15:59`); beyond it the cast fails. */
const LONGEST_OFFSET = { hours: 15, minutes: 59 } as const;

/**
 * A cursor's timestamp PostgreSQL takes as `timestamptz`: the exact shape above, with a real calendar date (year 1
 * on) and time of day. Cursors go into SQL casts, so what a cast would refuse is refused here, as bad input.
 */
export function isCursorTimestamp(text: string): boolean {
  const match = TIMESTAMP.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const [offsetHours, offsetMinutes] = [Number(match[8] ?? 0), Number(match[9] ?? 0)];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const realDate = year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth;
  const realTime = hour <= 23 && minute <= 59 && second <= 59;
  return realDate && realTime && offsetHours <= LONGEST_OFFSET.hours && offsetMinutes <= LONGEST_OFFSET.minutes;
}
