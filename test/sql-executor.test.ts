import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { openOrm, type MikroORM } from '../data/orm.ts';
import { poolExecutor } from '../data/sql-executor.ts';

/** The gateway's per-request statements run on the ORM's own `pg` pool, values sent as parameters. */
let orm: MikroORM;

beforeAll(async () => {
  orm = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 3 });
});

afterAll(async () => {
  await orm?.close();
});

it('answers the rows of a statement with ? placeholders, values as parameters, types as the ORM reads them', async () => {
  const executor = poolExecutor(orm);
  const hostile = "Robert'); drop table tenants; --";
  const rows = await executor.execute<{ n: number; text: string; missing: string | null; at: unknown }[]>(
    `select cast(? as integer) + 1 as n, cast(? as text) as text, cast(? as text) as missing, cast(? as timestamptz) as at`,
    [41, hostile, null, new Date('2026-11-23T12:00:00Z')],
  );
  expect(rows).toHaveLength(1);
  expect(rows[0]!.n).toBe(42);
  expect(rows[0]!.text).toBe(hostile);
  expect(rows[0]!.missing).toBeNull();
  // The same parsers as the entity manager's, so query functions read their rows alike through either.
  const [viaOrm] = await orm.em.fork().execute<{ at: unknown }[]>(`select cast(? as timestamptz) as at`, [new Date('2026-11-23T12:00:00Z')]);
  expect(rows[0]!.at).toEqual(viaOrm!.at);
});

it('runs one statement on every pooled connection at once (each prepares it under the same name)', async () => {
  const executor = poolExecutor(orm);
  const answers = await Promise.all(
    Array.from({ length: 24 }, (_, i) => executor.execute<{ n: number }[]>(`select cast(? as integer) * 2 as n, pg_sleep(0.01)`, [i])),
  );
  expect(answers.map(([row]) => row!.n)).toEqual(Array.from({ length: 24 }, (_, i) => i * 2));
});

it('refuses a statement with a ? in quoted text, where it could be data rather than a placeholder', async () => {
  const executor = poolExecutor(orm);
  await expect(executor.execute(`select '?' as mark, cast(? as integer) as n`, [1])).rejects.toThrow(/without a \? in quoted text/);
  await expect(executor.execute(`select cast($1 as integer) as n`, [1])).rejects.toThrow(/numbered placeholders/);
});

it('keeps quoted constants as they are and numbers the placeholders around them', async () => {
  const executor = poolExecutor(orm);
  const [row] = await executor.execute<{ month: string; label: string; n: number }[]>(
    `select to_char(date_trunc('month', cast(? as date)), 'YYYY-MM-DD') as month, 'a:b' as label, cast(? as integer) as n`,
    ['2026-11-24', 7],
  );
  expect(row).toEqual({ month: '2026-11-01', label: 'a:b', n: 7 });
});

it('keeps the statements of two executors on one pool apart', async () => {
  const first = poolExecutor(orm);
  const second = poolExecutor(orm);
  for (let round = 0; round < 5; round++) {
    const [a, b] = await Promise.all([
      first.execute<{ v: string }[]>(`select cast(? as text) || cast(? as text) as v`, ['x', 'a']),
      second.execute<{ v: number }[]>(`select cast(? as integer) as v`, [round]),
    ]);
    expect(a[0]!.v).toBe('xa');
    expect(b[0]!.v).toBe(round);
  }
});
