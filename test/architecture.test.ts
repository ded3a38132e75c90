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
      const output = await cruise(FOLDERS, { validate: true, ruleSet: rules as never, parser: 'swc', tsPreCompilationDeps: true, doNotFollow: { path: 'node_modules' } });
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

  it('sees type-only imports and packages, so the type-only and package rules can bite', () => {
    const workflow = result.modules.find((module) => module.source === 'workflows/payment/payment.workflow.ts')!;
    const activities = workflow.dependencies.find((d) => d.resolved === 'activities/index.ts')!;
    expect(activities.dependencyTypes).toContain('type-only');
    expect(workflow.dependencies.some((d) => d.resolved.startsWith('node_modules/@temporalio/workflow/'))).toBe(true);
  });

  it('reads the environment only in platform/config.ts, where every setting is validated and documented', () => {
    const product = result.modules.filter((module) => /^(api|worker|workflows|activities|services|data|schema|adapters|platform|domain|sandbox)\/.+\.ts$/.test(module.source));
    expect(product.length).toBeGreaterThan(50);
    const readers = product.filter((module) => /process\.env\b/.test(readFileSync(path.join(ROOT, module.source), 'utf8'))).map((module) => module.source);
    expect(readers).toEqual(['platform/config.ts']);
  });

  it('keeps the table of docs/architecture.md in step with the rules', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    for (const folder of FOLDERS) expect(doc, `docs/architecture.md names ${folder}/`).toContain(`\`${folder}/\``);
  });
});
