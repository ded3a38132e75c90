import type { SqlExecutor } from '../sql-executor.ts';

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

/** The admission columns every `routines` admission call answers (migration 000016). */
export interface AdmissionColumns {
  subject: string;
  rate_limit: number;
  admitted: boolean;
  current_count: number;
  previous_count: number;
}

/** What an admission answers: the caller's row, the subject and limit it was counted under, and the counts. */
export type Admission<Row> = { readonly row: Row; readonly subject: string; readonly limit: number; readonly counts: WindowCounts };

/** The window's three parameters, in the order every admission routine takes them last. */
export const windowParams = (window: AdmissionWindow) => [window.windowStart, window.previousWindowStart, window.previousWeight] as const;

/** Splits a routine's answer into the caller's own columns and its admission. */
export function admissionOf<Row>(found: Row & AdmissionColumns): Admission<Row> {
  const { subject, rate_limit, admitted, current_count, previous_count, ...row } = found;
  return {
    row: row as unknown as Row,
    subject,
    limit: Number(rate_limit),
    counts: { admitted, current: Number(current_count), previous: Number(previous_count) },
  };
}

/**
 * Counts a request of a subject known beforehand (e.g. a tenant's e-mail requests) against `limit`, by
 * `routines.count_request`: the sliding estimate `current + 1 + previous × previousWeight <= limit` decides on the
 * locked window row, so concurrent gateways never admit more than the limit, and only an admitted request is
 * counted (refused ones do not push the caller's next window down). Keys are counted by the routines that find
 * them (`admit_api_key`, `admit_lead_key`), which call the same one.
 */
export async function admitRequest(em: SqlExecutor, input: AdmissionWindow & { subject: string; limit: number }): Promise<WindowCounts> {
  const [counts] = await em.execute<{ admitted: boolean; current_count: number; previous_count: number }[]>(
    `select admitted, current_count, previous_count from routines.count_request(?, ?, ?, ?, ?)`,
    [input.subject, input.limit, ...windowParams(input)],
  );
  return { admitted: counts!.admitted, current: Number(counts!.current_count), previous: Number(counts!.previous_count) };
}

/** Drops the subject's windows that started before `windowStart`. */
export async function deleteWindowsBefore(em: SqlExecutor, subject: string, windowStart: Date): Promise<void> {
  await em.execute(`delete from rate_limit_windows where subject = ? and window_start < ?`, [subject, windowStart]);
}
