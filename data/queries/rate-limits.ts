import type { EntityManager } from '@mikro-orm/postgresql';

/** The minute a request is counted in, and how much of the previous minute still lies within the last sixty seconds. */
export interface AdmissionWindow {
  readonly windowStart: Date;
  readonly previousWindowStart: Date;
  /** `1 − elapsed`: the weight of the previous window's count. */
  readonly previousWeight: number;
}

export interface WindowCounts {
  /** Whether this request was counted (admitted). */
  readonly admitted: boolean;
  /** Requests admitted in the current window before this one. */
  readonly current: number;
  /** Requests admitted in the previous window. */
  readonly previous: number;
}

/**
 * Who a statement counts: a `select` of at most one row with the columns `subject` (text), `rate_limit` (integer)
 * and `counted` (boolean; false counts nothing, e.g. a browser key sent from a foreign origin), plus any columns
 * its caller wants back. No row: nobody is counted (an unknown key) and the statement answers nothing.
 */
export interface CountedCaller {
  readonly sql: string;
  readonly params: readonly unknown[];
}

interface CountRow {
  subject: string;
  rate_limit: number;
  counted: boolean;
  admitted_count: number | null;
  current_count: number | null;
  previous_count: number;
}

/** What an admission statement answers: the caller's row, the subject and limit it was counted under, and the counts. */
export type Admission<Row> = { readonly row: Row; readonly subject: string; readonly limit: number; readonly counted: boolean; readonly counts: WindowCounts };

/**
 * Finds the caller and counts its request in one statement: the sliding estimate
 * `current + 1 + previous × previousWeight <= limit` decides, and only an admitted request is counted (refused ones
 * do not push the caller's next window down). The conflict update's condition is checked on the locked row, so
 * concurrent gateways never admit more than the limit. Every rate limit is counted by this statement.
 */
export async function admitCaller<Row>(em: EntityManager, caller: CountedCaller, window: AdmissionWindow): Promise<Admission<Row> | undefined> {
  const [found] = await em.execute<(Row & CountRow)[]>(
    `with caller as (${caller.sql}),
     previous as (
       select coalesce((select w.request_count from rate_limit_windows w join caller c on w.subject = c.subject where w.window_start = ?), 0) as n
     ), admitted as (
       insert into rate_limit_windows (subject, window_start, request_count)
       select c.subject, ?, 1 from caller c, previous p where c.counted and 1 + p.n * cast(? as double precision) <= c.rate_limit
       on conflict (subject, window_start) do update set request_count = rate_limit_windows.request_count + 1
         where rate_limit_windows.request_count + 1 + (select n from previous) * cast(? as double precision) <= (select rate_limit from caller)
       returning request_count
     )
     select c.*,
            (select request_count from admitted) as admitted_count,
            (select w.request_count from rate_limit_windows w where w.subject = c.subject and w.window_start = ?) as current_count,
            (select n from previous) as previous_count
       from caller c`,
    [...caller.params, window.previousWindowStart, window.windowStart, window.previousWeight, window.previousWeight, window.windowStart],
  );
  if (!found) return undefined;
  const { subject, rate_limit, counted, admitted_count, current_count, previous_count, ...row } = found;
  return {
    row: row as unknown as Row,
    subject,
    limit: Number(rate_limit),
    counted,
    // The outer select sees the table as it was before this statement's insert.
    counts: { admitted: admitted_count != null, current: Number(current_count ?? 0), previous: Number(previous_count ?? 0) },
  };
}

/** Counts a request of a subject known beforehand (e.g. a tenant's e-mail requests) against `limit`. */
export async function admitRequest(em: EntityManager, input: AdmissionWindow & { subject: string; limit: number }): Promise<WindowCounts> {
  const admission = await admitCaller<Record<string, never>>(
    em,
    { sql: `select cast(? as text) as subject, cast(? as integer) as rate_limit, true as counted`, params: [input.subject, input.limit] },
    input,
  );
  return admission!.counts;
}

/** Drops the subject's windows that started before `windowStart`. */
export async function deleteWindowsBefore(em: EntityManager, subject: string, windowStart: Date): Promise<void> {
  await em.execute(`delete from rate_limit_windows where subject = ? and window_start < ?`, [subject, windowStart]);
}
