import type { MikroORM } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';

/** How the triggers of `refuseRows` and `slowRows` are named: they stay in the run's database, which schema checks leave out. */
export const REFUSAL_TRIGGER_PREFIX = 'test_refuse_';

type Orm = Pick<MikroORM, 'em'>;
/** Lets the rows through again; called in the test's `finally`. */
type Allow = () => Promise<void>;

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
export async function refuseRows(orm: Orm, table: string, event: 'insert' | 'update' | 'update once' | 'update at commit', when: string, errcode = '23514'): Promise<Allow> {
  const name = triggerName();
  const refusal = `raise exception 'refused by test' using errcode = '${errcode}'`;
  if (event === 'update once') {
    await orm.em.fork().execute(`create sequence ${name}`);
    return installRowTrigger(orm, name, `before update on ${table}`, when, `if nextval('${name}') = 1 then ${refusal}; end if; return new;`);
  }
  const timing = event === 'insert' ? `before insert on ${table}` : event === 'update' ? `before update on ${table}` : `after update on ${table}`;
  return installRowTrigger(orm, name, timing, when, `${refusal};`, event === 'update at commit');
}

/** Makes each update of the rows of `table` that `when` selects take `seconds` longer, as under a busy database. */
export async function slowRows(orm: Orm, table: string, when: string, seconds: number): Promise<Allow> {
  return installRowTrigger(orm, triggerName(), `before update on ${table}`, when, `perform pg_sleep(${Number(seconds)}); return new;`);
}

const triggerName = () => `${REFUSAL_TRIGGER_PREFIX}${randomUUID().replaceAll('-', '')}`;

/** A row trigger running `body` (PL/pgSQL) for the rows `when` selects; `deferred`: at the transaction's commit. */
async function installRowTrigger(orm: Orm, name: string, timing: string, when: string, body: string, deferred = false): Promise<Allow> {
  const em = orm.em.fork();
  await em.execute(`create function ${name}() returns trigger language plpgsql as $$ begin ${body} end $$`);
  // Allowed again by making the function let every row pass: dropping the trigger would take an exclusive lock of the
  // table, waiting behind (and making wait) every other suite's open transaction on it. The database is dropped
  // after the run, the trigger (and the sequence of `update once`) with it.
  const allow = async () => {
    await em.execute(`create or replace function ${name}() returns trigger language plpgsql as $$ begin return new; end $$`);
  };
  try {
    await em.execute(
      deferred
        ? `create constraint trigger ${name} ${timing} deferrable initially deferred for each row when (${when}) execute function ${name}()`
        : `create trigger ${name} ${timing} for each row when (${when}) execute function ${name}()`,
    );
  } catch (error) {
    await em.execute(`drop function if exists ${name}()`);
    await em.execute(`drop sequence if exists ${name}`);
    throw error;
  }
  return allow;
}
