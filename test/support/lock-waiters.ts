import type { MikroORM } from '@mikro-orm/postgresql';
import { expect, vi } from 'vitest';

/**
 * Concurrency tests hold a row (or table) lock in a transaction of their own, start the contenders, and release the
 * lock only once every contender waits on it: contenders run one after another would pass a check-then-write too.
 * PostgreSQL shows each waiting statement in `pg_stat_activity`; these helpers count them by their text.
 */

/**
 * Statements of this database whose text is like `pattern` (SQL `ilike`) that wait on a lock now; with `blockedBy`
 * (the backend pid of the test's lock holder, `select pg_backend_pid()` in its transaction) only those it blocks, so
 * other suites' statements of the same text never count.
 */
export async function countLockWaiters(orm: Pick<MikroORM, 'em'>, pattern: string, blockedBy?: number): Promise<number> {
  const [row] = await orm.em.fork().execute<{ n: number }[]>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query ilike ? and (cast(? as int) is null or cast(? as int) = any(pg_blocking_pids(pid)))`,
    [pattern, blockedBy ?? null, blockedBy ?? null],
  );
  return row!.n;
}

/** The backend pid of a connection holding a transaction open (the lock holder `blockedBy` names). */
export async function backendPidOf(em: { execute<T>(sql: string): Promise<T> }): Promise<number> {
  const [row] = await em.execute<{ pid: number }[]>(`select pg_backend_pid() as pid`);
  return row!.pid;
}

/**
 * Waits until `count` statements like `pattern` wait on a lock: at least (another suite's statements can only add to
 * the count), or `exactly`. `blockedBy` keeps only the test's own waiters, but only the first waiter of a row names
 * the holder (the others wait behind that first one: PostgreSQL's `pg_blocking_pids` names it), so it suits one
 * waiter; several waiters are counted by text alone. `orm` must have a connection free while the
 * contenders wait: not the pool they exhaust.
 */
export async function waitForLockWaiters(
  orm: Pick<MikroORM, 'em'>,
  pattern: string,
  expected: { count: number; exactly?: boolean; blockedBy?: number; timeoutMs?: number },
): Promise<void> {
  await vi.waitFor(
    async () => {
      const waiting = await countLockWaiters(orm, pattern, expected.blockedBy);
      const message = `statements like ${pattern} waiting on a lock`;
      if (expected.exactly) expect(waiting, message).toBe(expected.count);
      else expect(waiting, message).toBeGreaterThanOrEqual(expected.count);
    },
    { timeout: expected.timeoutMs ?? 15_000, interval: 50 },
  );
}
