/**
 * The import direction of docs/architecture.md, checked by test/architecture.test.ts (and
 * `npx depcruise --config .dependency-cruiser.cjs api worker ...`). Each rule names a folder and what it
 * may not import; a new folder needs a line here and in the table.
 */
const layer = (name, mayImport, { exceptFrom } = {}) => ({
  name: `${name}-imports-only-${mayImport.join('-') || 'nothing'}`,
  severity: 'error',
  comment: `${name}/ may import only ${mayImport.length ? mayImport.map((m) => `${m}/`).join(', ') : 'packages'} (docs/architecture.md)`,
  from: { path: `^${name}/`, ...(exceptFrom ? { pathNot: exceptFrom } : {}) },
  to: {
    path: '^(api|worker|scripts|bench|test|sandbox|workflows|activities|services|data|schema|adapters|platform|domain)/',
    pathNot: [`^${name}/`, ...mayImport.map((m) => `^${m}/`)],
  },
});
const gatewayMayImport = ['services', 'data', 'schema', 'adapters', 'domain', 'platform'];

module.exports = {
  forbidden: [
    layer('domain', []),
    layer('platform', []),
    layer('schema', ['domain']),
    layer('data', ['schema', 'domain']),
    layer('services', ['data', 'schema', 'domain']),
    layer('activities', ['services', 'data', 'schema', 'adapters', 'domain']),
    layer('sandbox', ['domain', 'platform']),
    layer('api', gatewayMayImport, { exceptFrom: '^api/main\\.ts$' }),
    {
      name: 'gateway-entry-point-hosts-a-worker-through-one-module',
      severity: 'error',
      comment: "api/main.ts composes the gateway, and the worker it hosts (GATEWAY_WORKER=on) through worker/hosted-worker.ts only",
      from: { path: '^api/main\\.ts$' },
      to: {
        path: '^(api|worker|scripts|bench|test|sandbox|workflows|activities|services|data|schema|adapters|platform|domain)/',
        pathNot: ['^api/', ...gatewayMayImport.map((m) => `^${m}/`), '^worker/hosted-worker\\.ts$'],
      },
    },
    layer('worker', ['activities', 'workflows', 'data', 'adapters', 'domain', 'platform']),
    {
      name: 'adapters-import-only-domain-and-workflow-contracts',
      severity: 'error',
      comment: 'adapters/ implement ports of domain/; the Temporal client also needs the workflows\' public contract (names, ids, messages)',
      from: { path: '^adapters/' },
      to: {
        path: '^(api|worker|scripts|bench|test|sandbox|activities|services|data|schema|platform)/',
      },
    },
    {
      name: 'adapters-name-workflow-functions-by-type-only',
      severity: 'error',
      comment: 'workflow code runs only in the worker sandbox; the Temporal client names workflow functions by type',
      from: { path: '^adapters/' },
      to: { path: '^workflows/', pathNot: '^workflows/contract/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-import-only-domain-and-activity-types',
      severity: 'error',
      comment: 'workflows/ are deterministic and bundled into the Temporal sandbox: pure domain code, and activities by type only',
      from: { path: '^workflows/' },
      to: {
        path: '^(api|worker|scripts|bench|test|sandbox|activities|services|data|schema|adapters|platform)/',
        pathNot: '^activities/',
      },
    },
    {
      name: 'workflows-see-activities-by-type-only',
      severity: 'error',
      comment: 'activities run in the worker, never inside the workflow sandbox',
      from: { path: '^workflows/' },
      to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflow-contracts-import-only-domain',
      severity: 'error',
      comment: 'workflows/contract/ is what clients import: it must not pull workflow code (or activities) in with it',
      from: { path: '^workflows/contract/' },
      to: { path: '^(workflows|activities)/', pathNot: '^workflows/contract/' },
    },
    {
      name: 'workflows-use-no-node-or-io-packages',
      severity: 'error',
      comment: 'workflow code may not reach I/O: only @temporalio/workflow, @temporalio/common and pure code (no dev tool either)',
      from: { path: '^workflows/' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'],
        pathNot: ['(^|/)node_modules/@temporalio/(workflow|common)/'],
      },
    },
    {
      name: 'domain-uses-no-database-temporal-or-http-packages',
      severity: 'error',
      comment: 'the core is pure: no ORM, no Temporal, no HTTP (server, client or socket)',
      from: { path: '^domain/' },
      to: { path: ['(^|/)node_modules/(@mikro-orm|@temporalio|fastify|@fastify|@apollo|pg|kysely|nodemailer|undici|node-fetch|axios|got)/', '^(node:)?(http|https|http2|net|tls|dgram)$'] },
    },
    {
      name: 'nothing-imports-test-scripts-or-bench',
      severity: 'error',
      from: { pathNot: '^(test|scripts|bench)/' },
      to: { path: '^(test|scripts|bench)/' },
    },
    {
      name: 'scripts-and-bench-import-no-test',
      severity: 'error',
      comment: 'tools run on a machine without the test suite in mind: a test helper they need belongs in the product or beside them',
      from: { path: '^(scripts|bench)/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'folders import one way; a cycle inside a folder still makes its modules unreadable alone',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
