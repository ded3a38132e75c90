import type { MikroORM } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';

/** How the triggers of `refuseRows` are named: they stay in the run's database, which schema checks leave out. */
export const REFUSAL_TRIGGER_PREFIX = 'test_refuse_';

/**
 * Makes PostgreSQL refuse the rows of `table` that `when` selects until the returned function is called, as a failing
 * database would. `insert` refuses the statement itself with `errcode` (23514, a check violation, is refused for good;
 * 57P03 reads as the database away, and is retried); `update at commit` lets the statement pass and refuses its
 * transaction at the commit (a deferred constraint trigger), after everything else in it was written. Every suite
 * shares the database: `when` must select the test's own rows (its tenant), and the caller allows them again in
 * `finally`.
 */
export async function refuseRows(orm: Pick<MikroORM, 'em'>, table: string, event: 'insert' | 'update at commit', when: string, errcode = '23514'): Promise<() => Promise<void>> {
  const name = `${REFUSAL_TRIGGER_PREFIX}${randomUUID().replaceAll('-', '')}`;
  const em = orm.em.fork();
  await em.execute(`create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'refused by test' using errcode = '${errcode}'; end $$`);
  // Allowed again by making the function let every row pass: dropping the trigger would take an exclusive lock of the
  // table, waiting behind (and making wait) every other suite's open transaction on it. The database is dropped
  // after the run, the trigger with it.
  const allow = async () => {
    await em.execute(`create or replace function ${name}() returns trigger language plpgsql as $$ begin return new; end $$`);
  };
  try {
    await em.execute(
      event === 'insert'
        ? `create trigger ${name} before insert on ${table} for each row when (${when}) execute function ${name}()`
        : `create constraint trigger ${name} after update on ${table} deferrable initially deferred for each row when (${when}) execute function ${name}()`,
    );
  } catch (error) {
    await em.execute(`drop function if exists ${name}()`);
    throw error;
  }
  return allow;
}
