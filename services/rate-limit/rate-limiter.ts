import type { SqlExecutor } from '../../data/sql-executor.ts';
import { admitRequest, deleteWindowsBefore, type AdmissionWindow, type WindowCounts } from '../../data/queries/rate-limits.ts';
import { DomainError } from '../../domain/errors.ts';
import { secondsUntilAdmitted } from '../../domain/rate-limit/sliding-window.ts';

const WINDOW_MS = 60_000;

/**
 * How API and lead keys are counted: the limit of keys whose tenant sets none, the clock windows are counted by
 * (tests inject one), and the counter pool the counts are written through. That pool's sessions commit
 * asynchronously (`openCounterOrm`): every request of a key updates one window row, and waiting for each commit's
 * WAL flush would make the key's requests pass that row one fsync at a time.
 */
export interface RateLimitPolicy {
  readonly defaultPerMinute: number;
  readonly now: () => Date;
  /** Statements on the counter pool; only rate-limit statements (and the key look-ups they join) run on it. */
  readonly counters: SqlExecutor;
}

/**
 * A sliding one-minute window per subject (an API key): the requests of the current minute plus the previous
 * minute's, weighted by how much of it still lies within the last sixty seconds. So no caller gets twice the
 * limit across a minute's edge.
 */
export function slidingWindowAt(now: Date): AdmissionWindow & { elapsed: number } {
  const windowStart = new Date(Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS);
  const previousWindowStart = new Date(windowStart.getTime() - WINDOW_MS);
  const elapsed = (now.getTime() - windowStart.getTime()) / WINDOW_MS;
  return { windowStart, previousWindowStart, previousWeight: 1 - elapsed, elapsed };
}

/**
 * What follows a counting statement: the first request of a new window drops the subject's older windows (only
 * the previous one still matters), and a refused request is a 429 telling when the window admits it again.
 */
export async function settleAdmission(
  em: SqlExecutor,
  admission: { subject: string; limit: number; counts: WindowCounts },
  window: ReturnType<typeof slidingWindowAt>,
): Promise<void> {
  const { subject, limit, counts } = admission;
  if (counts.admitted && counts.current === 0) await deleteWindowsBefore(em, subject, window.previousWindowStart);
  if (!counts.admitted) {
    const retryAfterSeconds = secondsUntilAdmitted({ ...counts, limit, elapsed: window.elapsed, windowSeconds: WINDOW_MS / 1000 });
    throw new DomainError('rate_limited', `Rate limit of ${limit} requests per minute exceeded`, { retryAfterSeconds });
  }
}

/**
 * Counts a request of a subject known beforehand (a tenant's e-mail requests) in PostgreSQL by one atomic
 * statement, shared by every gateway process; 429 over the limit. Keys are counted by the statement that finds
 * them instead (`authenticateApiKey`, `authenticateLeadWrite`).
 */
export async function consumeRateLimit(em: SqlExecutor, subject: string, limitPerMinute: number, now = new Date()): Promise<void> {
  const window = slidingWindowAt(now);
  const counts = await admitRequest(em, { subject, limit: limitPerMinute, ...window });
  await settleAdmission(em, { subject, limit: limitPerMinute, counts }, window);
}
