import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../domain/errors.ts';

const WINDOW_MS = 60_000;

/**
 * A fixed one-minute window per subject (an API key), counted in PostgreSQL with one atomic upsert,
 * so the limit holds across any number of gateway processes.
 */
export async function consumeRateLimit(em: EntityManager, subject: string, limitPerMinute: number, now = new Date()): Promise<void> {
  const windowStart = new Date(Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS);
  const [row] = await em.execute<{ request_count: number }[]>(
    `insert into rate_limit_windows (subject, window_start, request_count) values (?, ?, 1)
     on conflict (subject, window_start) do update set request_count = rate_limit_windows.request_count + 1
     returning request_count`,
    [subject, windowStart],
  );
  const count = row?.request_count ?? 1;
  if (count === 1) {
    // First request of a new window: drop this subject's old windows so the table stays small.
    await em.execute(`delete from rate_limit_windows where subject = ? and window_start < ?`, [subject, windowStart]);
  }
  if (count > limitPerMinute) {
    const retryAfterSeconds = Math.max(1, Math.ceil((windowStart.getTime() + WINDOW_MS - now.getTime()) / 1000));
    throw new DomainError('rate_limited', `Rate limit of ${limitPerMinute} requests per minute exceeded`, { retryAfterSeconds });
  }
}
