import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
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
    // `../../node_modules/…` where node_modules is a link to another checkout's (as the rules match it too).
    expect(workflow.dependencies.some((d) => /(^|\/)node_modules\/@temporalio\/workflow\//.test(d.resolved))).toBe(true);
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

/**
 * Each rule on a tree made of one violation of it: a rule whose pattern drifted from the folders it guards would
 * otherwise pass for ever on the real tree.
 */
describe('architecture rules, each on a violation of it', () => {
  const violations: Record<string, { file: string; imports: string }> = {
    'domain-imports-only-nothing': { file: 'domain/money.ts', imports: `import '../data/queries.ts';` },
    'platform-imports-only-nothing': { file: 'platform/config.ts', imports: `import '../domain/pure.ts';` },
    'schema-imports-only-domain': { file: 'schema/entity.ts', imports: `import '../data/queries.ts';` },
    'data-imports-only-schema-domain': { file: 'data/queries.ts', imports: `import '../services/use-case.ts';` },
    'services-imports-only-data-schema-domain': { file: 'services/use-case.ts', imports: `import '../adapters/smtp.ts';` },
    'activities-imports-only-services-data-schema-adapters-domain': { file: 'activities/index.ts', imports: `import '../platform/config.ts';` },
    'sandbox-imports-only-domain-platform': { file: 'sandbox/server.ts', imports: `import '../data/queries.ts';` },
    'api-imports-only-services-data-schema-adapters-domain-platform': { file: 'api/server.ts', imports: `import '../worker/hosted-worker.ts';` },
    'gateway-entry-point-hosts-a-worker-through-one-module': { file: 'api/main.ts', imports: `import '../worker/main.ts';` },
    'worker-imports-only-activities-workflows-data-adapters-domain-platform': { file: 'worker/main.ts', imports: `import '../services/use-case.ts';` },
    'adapters-import-only-domain-and-workflow-contracts': { file: 'adapters/smtp.ts', imports: `import '../services/use-case.ts';` },
    'adapters-name-workflow-functions-by-type-only': { file: 'adapters/temporal.ts', imports: `import { payment } from '../workflows/payment/payment.workflow.ts'; export const run = payment;` },
    'workflows-import-only-domain-and-activity-types': { file: 'workflows/payment/payment.workflow.ts', imports: `import '../../services/use-case.ts'; export const payment = 1;` },
    'workflows-see-activities-by-type-only': { file: 'workflows/email.workflow.ts', imports: `import { activity } from '../activities/index.ts'; export const email = activity;` },
    'workflow-contracts-import-only-domain': { file: 'workflows/contract/ids.ts', imports: `import '../refund.workflow.ts';` },
    'workflows-use-no-node-or-io-packages': { file: 'workflows/refund.workflow.ts', imports: `import 'vitest';` },
    'domain-uses-no-database-temporal-or-http-packages': { file: 'domain/http.ts', imports: `import 'node:http';` },
    'nothing-imports-test-scripts-or-bench': { file: 'services/tool.ts', imports: `import '../scripts/start.ts';` },
    'scripts-and-bench-import-no-test': { file: 'bench/run.ts', imports: `import '../test/support.ts';` },
    'no-circular': { file: 'domain/cycle-a.ts', imports: `import './cycle-b.ts';` },
  };
  const plain = ['domain/pure.ts', 'adapters/smtp.ts', 'services/use-case.ts', 'worker/hosted-worker.ts', 'scripts/start.ts', 'test/support.ts'];
  const files: Record<string, string> = {
    ...Object.fromEntries(plain.map((file) => [file, 'export {};'])),
    'activities/index.ts': 'export const activity = 1;',
    'domain/cycle-b.ts': `import './cycle-a.ts';`,
    ...Object.fromEntries(Object.values(violations).map(({ file, imports }) => [file, `${imports}\nexport {};`])),
  };

  let found: Set<string>;
  beforeAll(async () => {
    // Inside the repository (ignored by git), so the tree resolves packages as the real one does; removed after.
    const root = path.join(ROOT, '.data', `architecture-check-${randomUUID()}`);
    const cwd = process.cwd();
    try {
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        writeFileSync(path.join(root, file), text);
      }
      for (const file of ['package.json', 'tsconfig.json']) copyFileSync(path.join(ROOT, file), path.join(root, file));
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
      process.chdir(root);
      const output = await cruise(FOLDERS, { validate: true, ruleSet: rules as never, parser: 'swc', tsPreCompilationDeps: true, doNotFollow: { path: 'node_modules' } });
      found = new Set((output.output as ICruiseResult).summary.violations.map((v) => `${v.rule.name} ${v.from}`));
    } finally {
      process.chdir(cwd);
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  it('names every rule of .dependency-cruiser.cjs once here', () => {
    expect(Object.keys(violations).sort()).toEqual((rules.forbidden as { name: string }[]).map((rule) => rule.name).sort());
  });

  it.each(Object.entries(violations))('%s fires on %o', (rule, { file }) => {
    expect(found, [...found].join('\n')).toContain(`${rule} ${file}`);
  });
});
