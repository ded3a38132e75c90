import type { EntityManager } from '@mikro-orm/postgresql';
import { admitRequest, deleteWindowsBefore } from '../../data/queries/rate-limits.ts';
import { DomainError } from '../../domain/errors.ts';
import { secondsUntilAdmitted } from '../../domain/rate-limit/sliding-window.ts';

const WINDOW_MS = 60_000;

/**
 * A sliding one-minute window per subject (an API key): the requests of the current minute plus the previous
 * minute's, weighted by how much of it still lies within the last sixty seconds. So no caller gets twice the
 * limit across a minute's edge. Counted in PostgreSQL by one atomic statement, shared by every gateway process.
 */
export async function consumeRateLimit(em: EntityManager, subject: string, limitPerMinute: number, now = new Date()): Promise<void> {
  const windowStart = new Date(Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS);
  const previousWindowStart = new Date(windowStart.getTime() - WINDOW_MS);
  const elapsed = (now.getTime() - windowStart.getTime()) / WINDOW_MS;
  const counts = await admitRequest(em, { subject, windowStart, previousWindowStart, previousWeight: 1 - elapsed, limit: limitPerMinute });
  if (counts.admitted && counts.current === 0) {
    // First request of a new window: only the previous window still matters.
    await deleteWindowsBefore(em, subject, previousWindowStart);
  }
  if (!counts.admitted) {
    const retryAfterSeconds = secondsUntilAdmitted({ ...counts, limit: limitPerMinute, elapsed, windowSeconds: WINDOW_MS / 1000 });
    throw new DomainError('rate_limited', `Rate limit of ${limitPerMinute} requests per minute exceeded`, { retryAfterSeconds });
  }
}
