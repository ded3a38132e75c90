import type { MikroORM } from '@mikro-orm/postgresql';
import { expect, vi } from 'vitest';

/**
 * Concurrency tests hold a row (or table) lock in a transaction of their own, start the contenders, and release the
 * lock only once every contender waits on it: contenders run one after another would pass a check-then-write too.
 * PostgreSQL shows each waiting statement in `pg_stat_activity`; these helpers count them by their text.
 */

/** Statements of this database whose text is like `pattern` (SQL `ilike`) that wait on a lock now. */
export async function countLockWaiters(orm: Pick<MikroORM, 'em'>, pattern: string): Promise<number> {
  const [row] = await orm.em
    .fork()
    .execute<{ n: number }[]>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike ?`, [pattern]);
  return row!.n;
}

/**
 * Waits until `count` statements like `pattern` wait on a lock: `exactly` for a test whose lock only its own
 * contenders can meet, else at least (another suite's statements can only add to the count). `orm` must have a
 * connection free while the contenders wait: not the pool they exhaust.
 */
export async function waitForLockWaiters(
  orm: Pick<MikroORM, 'em'>,
  pattern: string,
  expected: { count: number; exactly?: boolean; timeoutMs?: number },
): Promise<void> {
  await vi.waitFor(
    async () => {
      const waiting = await countLockWaiters(orm, pattern);
      const message = `statements like ${pattern} waiting on a lock`;
      if (expected.exactly) expect(waiting, message).toBe(expected.count);
      else expect(waiting, message).toBeGreaterThanOrEqual(expected.count);
    },
    { timeout: expected.timeoutMs ?? 15_000, interval: 50 },
  );
}
