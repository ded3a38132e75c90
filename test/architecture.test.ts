import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(import.meta.dirname, '..');
const FOLDERS = ['api', 'worker', 'scripts', 'bench', 'test', 'sandbox', 'workflows', 'activities', 'services', 'data', 'schema', 'adapters', 'platform', 'domain'];
const rules = require('../.dependency-cruiser.cjs') as { forbidden: unknown[] };

/** The import direction of docs/architecture.md, as dependency-cruiser sees the real source tree. */
describe('architecture', () => {
  let result: ICruiseResult;
  beforeAll(async () => {
    const cwd = process.cwd();
    process.chdir(ROOT);
    try {
      const output = await cruise(FOLDERS, { validate: true, ruleSet: rules as never, doNotFollow: { path: 'node_modules' }, exclude: { path: 'node_modules' } });
      result = output.output as ICruiseResult;
    } finally {
      process.chdir(cwd);
    }
  }, 60_000);

  it('sees the whole tree (the rules would pass vacuously on an empty graph)', () => {
    const sources = result.modules.map((module) => module.source);
    expect(sources).toContain('api/server.ts');
    expect(sources).toContain('workflows/payment/payment.workflow.ts');
    const gateway = result.modules.find((module) => module.source === 'api/main.ts')!;
    expect(gateway.dependencies.map((d) => d.resolved)).toContain('api/server.ts');
  });

  it('has no import against the direction of docs/architecture.md', () => {
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
    expect(violations).toEqual([]);
  });

  it('lets workflows and the Temporal client see activities and workflow functions by type only', () => {
    // dependency-cruiser cannot tell type-only imports apart without a TypeScript 5 compiler API.
    const crossings = result.modules.flatMap((module) =>
      module.dependencies
        .filter((d) => (module.source.startsWith('workflows/') && d.resolved.startsWith('activities/')) || (module.source.startsWith('adapters/') && /^workflows\/.+\.workflow\.ts$/.test(d.resolved)))
        .map((d) => ({ from: module.source, specifier: d.module })),
    );
    expect(crossings.length).toBeGreaterThan(0);
    for (const { from, specifier } of crossings) {
      const source = readFileSync(path.join(ROOT, from), 'utf8');
      const importLine = source.split('\n').find((line) => line.includes(`'${specifier}'`));
      expect(importLine, `${from} imports ${specifier}`).toMatch(/^import type /);
    }
  });

  it('keeps the table of docs/architecture.md in step with the rules', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    for (const folder of FOLDERS) expect(doc, `docs/architecture.md names ${folder}/`).toContain(`\`${folder}/\``);
  });
});
