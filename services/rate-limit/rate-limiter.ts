import type { EntityManager } from '@mikro-orm/postgresql';
import { countRequestInWindow, deleteWindowsBefore } from '../../data/queries/rate-limits.ts';
import { DomainError } from '../../domain/errors.ts';

const WINDOW_MS = 60_000;

/**
 * A fixed one-minute window per subject (an API key), counted in PostgreSQL with one atomic upsert,
 * so the limit holds across any number of gateway processes.
 */
export async function consumeRateLimit(em: EntityManager, subject: string, limitPerMinute: number, now = new Date()): Promise<void> {
  const windowStart = new Date(Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS);
  const count = await countRequestInWindow(em, subject, windowStart);
  if (count === 1) {
    // First request of a new window: drop this subject's old windows so the table stays small.
    await deleteWindowsBefore(em, subject, windowStart);
  }
  if (count > limitPerMinute) {
    const retryAfterSeconds = Math.max(1, Math.ceil((windowStart.getTime() + WINDOW_MS - now.getTime()) / 1000));
    throw new DomainError('rate_limited', `Rate limit of ${limitPerMinute} requests per minute exceeded`, { retryAfterSeconds });
  }
}
