import type { EntityManager } from '@mikro-orm/postgresql';

export interface WindowCounts {
  /** Whether this request was counted (admitted). */
  readonly admitted: boolean;
  /** Requests admitted in the current window before this one. */
  readonly current: number;
  /** Requests admitted in the previous window. */
  readonly previous: number;
}

/**
 * Counts a request in the current window only if the sliding estimate stays within the limit:
 * `current + 1 + previous × previousWeight <= limit`. One statement: the conflict update's condition is checked
 * on the locked row, so concurrent gateways never admit more than the limit, and refused requests are not
 * counted (they do not push the caller's next window down).
 */
export async function admitRequest(
  em: EntityManager,
  input: { subject: string; windowStart: Date; previousWindowStart: Date; previousWeight: number; limit: number },
): Promise<WindowCounts> {
  const [row] = await em.execute<{ admitted: number | null; current: number | null; previous: number }[]>(
    `with previous as (
       select coalesce((select request_count from rate_limit_windows where subject = ? and window_start = ?), 0) as n
     ), admitted as (
       insert into rate_limit_windows (subject, window_start, request_count)
       select ?, ?, 1 from previous where 1 + previous.n * cast(? as double precision) <= ?
       on conflict (subject, window_start) do update set request_count = rate_limit_windows.request_count + 1
         where rate_limit_windows.request_count + 1 + (select n from previous) * cast(? as double precision) <= ?
       returning request_count
     )
     select (select request_count from admitted) as admitted,
            (select request_count from rate_limit_windows where subject = ? and window_start = ?) as current,
            (select n from previous) as previous`,
    [
      input.subject, input.previousWindowStart,
      input.subject, input.windowStart, input.previousWeight, input.limit,
      input.previousWeight, input.limit,
      input.subject, input.windowStart,
    ],
  );
  // The outer select sees the table as it was before this statement's insert.
  return { admitted: row?.admitted != null, current: Number(row?.current ?? 0), previous: Number(row?.previous ?? 0) };
}

/** Drops the subject's windows that started before `windowStart`. */
export async function deleteWindowsBefore(em: EntityManager, subject: string, windowStart: Date): Promise<void> {
  await em.execute(`delete from rate_limit_windows where subject = ? and window_start < ?`, [subject, windowStart]);
}
