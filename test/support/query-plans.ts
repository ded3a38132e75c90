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
 * to its next.
 */
export async function explainEach(orm: MikroORM, schema: string, run: (em: EntityManager) => Promise<unknown>): Promise<ExplainedStatement[]> {
  const statements: ExplainedStatement[] = [];
  await orm.em.fork().transactional(async (tx) => {
    await tx.execute(`set local search_path to ${schema}, public`);
    const explaining = {
      execute: async (sql: string, params: unknown[] = []) => {
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
