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
 *
 * `update` refuses the update statement itself, as it is made (a failure the step meets at once, not at its commit:
 * what `update at commit` cannot show). `update once` refuses only the first update `when` selects and lets every later
 * one pass, as a transient failure a retry gets past does (40001, a serialization failure, say); it counts on a
 * sequence of the trigger's name, which no rollback undoes and which stays, as the trigger does, until the run's
 * database goes. A refusal for a while only is `when` bounded by `clock_timestamp()`.
 */
export async function refuseRows(orm: Pick<MikroORM, 'em'>, table: string, event: 'insert' | 'update' | 'update once' | 'update at commit', when: string, errcode = '23514'): Promise<() => Promise<void>> {
  const name = `${REFUSAL_TRIGGER_PREFIX}${randomUUID().replaceAll('-', '')}`;
  const em = orm.em.fork();
  const refusal = `raise exception 'refused by test' using errcode = '${errcode}'`;
  if (event === 'update once') await em.execute(`create sequence ${name}`);
  const body = event === 'update once' ? `if nextval('${name}') = 1 then ${refusal}; end if; return new;` : `${refusal};`;
  await em.execute(`create function ${name}() returns trigger language plpgsql as $$ begin ${body} end $$`);
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
        : event === 'update' || event === 'update once'
          ? `create trigger ${name} before update on ${table} for each row when (${when}) execute function ${name}()`
          : `create constraint trigger ${name} after update on ${table} deferrable initially deferred for each row when (${when}) execute function ${name}()`,
    );
  } catch (error) {
    await em.execute(`drop function if exists ${name}()`);
    if (event === 'update once') await em.execute(`drop sequence if exists ${name}`);
    throw error;
  }
  return allow;
}
