import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
/** Product code outside `data/`: none of it may hold SQL (docs/architecture.md, "How data is accessed"). */
const PRODUCT_FOLDERS = ['api', 'worker', 'workflows', 'activities', 'services', 'adapters', 'domain', 'schema', 'platform'];

/** What writing SQL outside a query module looks like: running a statement, or holding one in a string. */
const SQL_SIGNS: { name: string; pattern: RegExp }[] = [
  { name: 'runs a statement', pattern: /\.execute\s*[<(]/g },
  { name: 'builds SQL with a tag or raw fragment', pattern: /(?<![\w.])(?:sql`|raw\()/g },
  {
    name: 'holds SQL in a string',
    pattern: /[`'"]\s*(?:select\s[^`'";]*?\bfrom\s|select\s+(?:1|nextval)\b|insert\s+into\s|update\s+\w+\s+set\s|delete\s+from\s|with\s+\w+\s+as\s*\()/gi,
  },
];

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly sign: string;
}

function findSql(file: string, source: string): Finding[] {
  return SQL_SIGNS.flatMap(({ name, pattern }) =>
    [...source.matchAll(pattern)].map((match) => ({ file, line: source.slice(0, match.index).split('\n').length, sign: name })),
  );
}

function typescriptFiles(folder: string): string[] {
  return (readdirSync(path.join(ROOT, folder), { recursive: true }) as string[])
    .filter((name) => name.endsWith('.ts'))
    .map((name) => path.posix.join(folder, name.split(path.sep).join('/')));
}

const scan = (files: string[]) => files.flatMap((file) => findSql(file, readFileSync(path.join(ROOT, file), 'utf8')));

describe('data access', () => {
  it('recognises each way of writing SQL (the scan would otherwise pass vacuously)', () => {
    const signsIn = (source: string) => findSql('sample.ts', source).map((finding) => finding.sign);
    expect(signsIn('await em.execute<{ id: number }[]>(query)')).toContain('runs a statement');
    expect(signsIn("await tx.execute('delete from orders')")).toEqual(['runs a statement', 'holds SQL in a string']);
    expect(signsIn('const q = sql`select id from orders`;')).toContain('builds SQL with a tag or raw fragment');
    for (const statement of ['select id, state\n from orders', 'SELECT 1', 'insert into orders', 'update orders set state = ?', 'with volume as (']) {
      expect(signsIn(`const q = \`${statement}\`;`), statement).toContain('holds SQL in a string');
    }
    expect(signsIn("throw new Error('Please select a product');  client.workflow.executeUpdate(update)")).toEqual([]);
  });

  it('finds the SQL of every query module in data/queries/', () => {
    const modules = typescriptFiles('data/queries');
    expect(modules).toContain('data/queries/transactions.ts');
    const found = new Set(scan(modules).map((finding) => finding.file));
    expect(modules.filter((module) => !found.has(module))).toEqual([]);
  });

  it('has no SQL in product code outside data/', () => {
    const files = PRODUCT_FOLDERS.flatMap(typescriptFiles);
    expect(files).toContain('services/payments/submit-payment.ts');
    const violations = scan(files).map((f) => `${f.file}:${f.line} ${f.sign}`);
    expect(violations).toEqual([]);
  });
});
