import type { EntityManager } from '@mikro-orm/postgresql';
import type { MikroORM } from '../../data/orm.ts';

/**
 * How the plan suites check the product's SQL against tables of realistic size: the migrated tables are copied
 * (`like … including all`: columns, defaults, checks, indexes) into a schema of the suite's own and seeded there,
 * so suites running beside it never see the rows; the product's own query functions then run against an entity
 * manager that EXPLAINs each statement instead of running it (nothing is written).
 */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Plan Rows': number;
  Plans?: PlanNode[];
}

export interface ExplainedStatement {
  readonly sql: string;
  readonly plan: PlanNode;
}

/** Copies the given public tables into `schema`, runs the seed statements there and analyzes the copies. */
export async function seedPlanSchema(orm: MikroORM, schema: string, tables: readonly string[], seed: readonly string[]): Promise<void> {
  const em = orm.em.fork();
  await em.execute(`create schema ${schema}`);
  for (const table of tables) await em.execute(`create table ${schema}.${table} (like public.${table} including all)`);
  await em.transactional(async (tx) => {
    await tx.execute(`set local search_path to ${schema}`);
    for (const statement of seed) await tx.execute(statement);
  });
  for (const table of tables) await em.execute(`analyze ${schema}.${table}`);
}

export async function dropPlanSchema(orm: MikroORM | undefined, schema: string): Promise<void> {
  await orm?.em.fork().execute(`drop schema if exists ${schema} cascade`);
}

/**
 * The plan of every statement `run` sends, in `schema` (then `public`, where shared sequences live). Every
 * statement answers one stand-in row `{ id: 1 }`, so a function that uses its first statement's answer goes on
 * to its next. A call of a routine (schema `routines`) runs instead, and each statement inside it is explained.
 */
export async function explainEach(orm: MikroORM, schema: string, run: (em: EntityManager) => Promise<unknown>): Promise<ExplainedStatement[]> {
  const statements: ExplainedStatement[] = [];
  await orm.em.fork().transactional(async (tx) => {
    await tx.execute(`set local search_path to ${schema}, public`);
    const explaining = {
      execute: async (sql: string, params: unknown[] = []) => {
        if (/\broutines\./.test(sql)) {
          const call = await explainRoutineCall(orm, schema, sql, params);
          statements.push(...call.statements);
          return call.rows;
        }
        const [row] = await tx.execute<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(`explain (format json) ${sql}`, params);
        statements.push({ sql: sql.replace(/\s+/g, ' ').trim(), plan: row!['QUERY PLAN'][0]!.Plan });
        return [{ id: 1 }];
      },
    } as unknown as EntityManager;
    await run(explaining);
  });
  return statements;
}

/**
 * How a plan reads large tables badly: a sequential scan, or an index read estimated at more than `maxRows` rows.
 * A bitmap index scan names no table: it reads for the heap scan above it.
 */
export function planFindings(node: PlanNode, options: { large: ReadonlySet<string>; maxRows: number }, relation?: string): string[] {
  const table = node['Relation Name'] ?? relation;
  const own =
    table === undefined || !options.large.has(table)
      ? []
      : node['Node Type'] === 'Seq Scan'
        ? [`Seq Scan on ${table}`]
        : /Index/.test(node['Node Type']) && node['Plan Rows'] > options.maxRows
          ? [`${node['Node Type']} on ${table} reading ~${node['Plan Rows']} rows`]
          : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => planFindings(child, options, table))];
}

/** A sort of more than `pageRows`: the plan reads every match before returning the first (a few rows found by a key may be sorted). */
export function sortsMoreThan(node: PlanNode, pageRows: number): boolean {
  return (/Sort/.test(node['Node Type']) && node['Plan Rows'] > pageRows) || (node.Plans ?? []).some((child) => sortsMoreThan(child, pageRows));
}

/** The part of a `pg` client a routine call uses. */
interface NoticedClient {
  connect(): Promise<unknown>;
  query(sql: string): Promise<{ rows: unknown[] }>;
  on(event: 'notice', listener: (notice: { message?: string }) => void): unknown;
  end(): Promise<void>;
}

/**
 * Runs a routine call in `schema` and rolls it back, with PostgreSQL's `auto_explain` reporting the plan of every
 * statement the routine ran (as notices to this client): the plans PL/pgSQL actually used, which an EXPLAIN of the
 * call (one Function Scan) would hide. Needs a superuser connection, as the test databases have (`load`).
 */
async function explainRoutineCall(orm: MikroORM, schema: string, sql: string, params: readonly unknown[]): Promise<{ rows: unknown[]; statements: ExplainedStatement[] }> {
  // A connection of its own, outside the ORM's pool, with the pool's settings (the `pg` pool behind the ORM).
  const pool = (await orm.em.getConnection().getNativeClient()) as unknown as { Client: new (options: unknown) => NoticedClient; options: unknown };
  const client = new pool.Client(pool.options);
  const reports: string[] = [];
  client.on('notice', (notice) => reports.push(notice.message ?? ''));
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`set local search_path to ${schema}, public`);
    await client.query(`load 'auto_explain'`);
    for (const setting of ['log_min_duration = 0', 'log_nested_statements = on', "log_format = 'json'", "log_level = 'notice'"]) {
      await client.query(`set local auto_explain.${setting}`);
    }
    const { rows } = await client.query(orm.em.getPlatform().formatQuery(sql, [...params]));
    const statements = reports
      .filter((report) => report.includes('plan:'))
      .map((report) => JSON.parse(report.slice(report.indexOf('{'))) as { 'Query Text': string; Plan: PlanNode })
      .map((explained) => ({ sql: explained['Query Text'].replace(/\s+/g, ' ').trim(), plan: explained.Plan }));
    return { rows, statements };
  } finally {
    await client.query('rollback').catch(() => undefined);
    await client.end();
  }
}
