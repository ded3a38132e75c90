import type { EntityManager } from '@mikro-orm/postgresql';

/** Counts one request of the subject in the window starting at `windowStart`; returns the window's count including it. */
export async function countRequestInWindow(em: EntityManager, subject: string, windowStart: Date): Promise<number> {
  const [row] = await em.execute<{ request_count: number }[]>(
    `insert into rate_limit_windows (subject, window_start, request_count) values (?, ?, 1)
     on conflict (subject, window_start) do update set request_count = rate_limit_windows.request_count + 1
     returning request_count`,
    [subject, windowStart],
  );
  return row?.request_count ?? 1;
}

/** Drops the subject's windows that started before `windowStart`. */
export async function deleteWindowsBefore(em: EntityManager, subject: string, windowStart: Date): Promise<void> {
  await em.execute(`delete from rate_limit_windows where subject = ? and window_start < ?`, [subject, windowStart]);
}
