/**
 * `npm run bench [-- --duration 10]`: measures the gateway as a client sees it. Starts its own servers
 * (embedded PostgreSQL and Temporal dev server under .data/bench unless DATABASE_URL/TEMPORAL_ADDRESS
 * are set), runs the gateway as a separate process, provisions a bench tenant without a practical rate
 * limit, and drives load with autocannon. Prints p50/p99 latency and requests/s per scenario.
 * `BENCH_ONLY=<text>` picks scenarios by name, `BENCH_CONCURRENCY=<n>` one concurrency.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardFingerprinter } from '../domain/crypto/card-vault.ts';
import { startBenchServers, waitForHealth } from './bench-servers.ts';
import { migrate, openOrm } from '../data/orm.ts';
import { stopChild } from '../scripts/child-process.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { spawnEntry } from '../scripts/child-process.ts';
import { APPROVED_CARD, benchSubmitBody, scenarios, THREE_DS_CARD, type Scenario } from './scenarios.ts';
import { closedLoop } from './closed-loop.ts';
import { measureFloors, type FloorFigures } from './floor.ts';
import { phaseBreakdown } from './phases.ts';
import { hostedWorkerConfig } from '../worker/hosted-worker.ts';
import { workerTuningOf } from '../worker/worker-from-config.ts';
import { cpuPerRequest, snapshotCpu } from './cpu-usage.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';

const durationSeconds = Number(process.argv[process.argv.indexOf('--duration') + 1]) || 10;
/** `--memory-run 60`: after the scenarios, approved submits at concurrency 64 for that long, with resident memory before and after. */
/** `BENCH_PROCESSES=2`: that many gateway and worker processes (gateways on consecutive ports), for the scaling figure. */
const processCount = Math.max(1, Number(process.env.BENCH_PROCESSES ?? 1));
const memoryRunSeconds = process.argv.includes('--memory-run') ? Number(process.argv[process.argv.indexOf('--memory-run') + 1]) || 60 : 0;
const port = 3900;
const { config, servers, children } = await startBenchServers({ folder: 'bench', postgresPort: 54339, temporal: { port: 7299, uiPort: 8299 } });
const encryptionKey = randomBytes(32).toString('base64');

const orm = await openOrm({ databaseUrl: servers.databaseUrl });
await migrate(orm);
const apiKey = `sk_bench_${randomUUID().replaceAll('-', '')}`;
const clientId = `bench-${randomUUID().slice(0, 8)}`;
const [benchTenant] = await provision(
  { em: orm.em.fork(), secretBox: createSecretBox(Buffer.from(encryptionKey, 'base64')), fingerprintCard: createCardFingerprinter(Buffer.from(encryptionKey, 'base64')), actor: 'bench' },
  parseFixture({
    tenants: [
      {
        slug: clientId,
        name: 'Bench',
        clientId,
        rateLimitPerMinute: 100_000_000,
        apiKeys: [{ name: 'bench', value: apiKey }],
        products: [{ slug: 'bench', name: 'Bench', price: '10.00', currency: 'USD', velocity: { cardSubmitLimit: 1_000_000_000, emailSubmitLimit: 1_000_000_000 } }],
        merchantAccounts: [
          {
            mid: `BENCH-${clientId}`,
            title: 'Bench MID',
            gateway: 'sandbox',
            fullyLive: true,
            currencies: [{ currency: 'USD', gatewayCredentials: { apiKey: 'bench' } }],
          },
        ],
      },
    ],
  }),
);
const productId = benchTenant!.products[0]!.id;
await orm.close();

const sandboxPort = 4290; // not 4190: fetch refuses that "bad port" (sieve)
const childEnv = {
  ...process.env,
  DATABASE_URL: servers.databaseUrl,
  TEMPORAL_ADDRESS: servers.temporalAddress,
  TEMPORAL_TASK_QUEUE: `bench-${clientId}`,
  DATA_ENCRYPTION_KEY: encryptionKey,
  SANDBOX_PROCESSOR_URL: `http://127.0.0.1:${sandboxPort}`,
  PORT: String(port),
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
  // BENCH_CPU_PROF=<dir>: gateway, worker and sandbox write V8 CPU profiles there when they exit (bench/profile-summary.ts reads them).
  ...(process.env.BENCH_CPU_PROF ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`.trim() } : {}),
};
children.push(
  // Its ledger beside the bench's PostgreSQL (`.data/bench/sandbox`), kept and removed with it: a ledger kept from runs
  // against a database since removed answers a new order's reference (`ord23-a1`) with an old run's authorization.
  spawnEntry('sandbox/main.ts', { ...childEnv, DATA_DIR: config.dataDir, SANDBOX_PROCESSOR_PORT: String(sandboxPort) }, 'inherit'),
  spawnEntry('worker/main.ts', childEnv, 'inherit'),
);
const gateway = spawnEntry('api/main.ts', childEnv, 'inherit');
children.push(gateway);
// More gateways and workers, as a load balancer would spread them: every one shares PostgreSQL and Temporal.
const extraGatewayUrls: string[] = [];
const extraProcessNames = new Map<number, string>();
for (let index = 1; index < processCount; index++) {
  const [extraWorker, extraGateway] = [spawnEntry('worker/main.ts', childEnv, 'inherit'), spawnEntry('api/main.ts', { ...childEnv, PORT: String(port + index) }, 'inherit')];
  children.push(extraWorker, extraGateway);
  extraProcessNames.set(extraWorker.pid!, 'worker').set(extraGateway.pid!, 'gateway');
  extraGatewayUrls.push(`http://127.0.0.1:${port + index}`);
}
// A crash of the bench must not leave servers holding the ports for the next run.
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));
const baseUrl = `http://127.0.0.1:${port}`;
await waitForHealth(`${baseUrl}/readyz`);
for (const url of extraGatewayUrls) await waitForHealth(`${url}/readyz`);

const probe = await fetch(`${baseUrl}/api/${productId}`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: apiKey },
  body: JSON.stringify(benchSubmitBody(APPROVED_CARD)),
  signal: AbortSignal.timeout(30_000),
});
const probeResult = (await probe.json()) as { info?: string };
if (probeResult.info !== 'Success') throw new Error(`The bench checkout is not approved: ${JSON.stringify(probeResult)}`);

// Where the time goes: 21 approved submits one after another (the first ones warm the processes up), timed by the
// client; the one of median time is read back from its workflow history.
const traces: { submitOrderId: number; clientMs: number }[] = [];
for (let i = 0; i < 21; i++) {
  const began = performance.now();
  const traced = (await (
    await fetch(`${baseUrl}/api/${productId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: apiKey },
      body: JSON.stringify(benchSubmitBody(APPROVED_CARD)),
    })
  ).json()) as { submitOrderId: number };
  traces.push({ submitOrderId: traced.submitOrderId, clientMs: performance.now() - began });
}
const medianTrace = [...traces].sort((a, b) => a.clientMs - b.clientMs)[Math.floor(traces.length / 2)]!;
const phaseRows = await phaseBreakdown({
  temporalAddress: servers.temporalAddress,
  namespace: config.temporalNamespace,
  workflowId: workflowIds.payment(benchTenant!.id, medianTrace.submitOrderId),
  clientMs: medianTrace.clientMs,
});

const processNames = new Map<number, string>([
  [process.pid, 'bench (autocannon)'],
  [gateway.pid!, 'gateway'],
  [children[0]!.pid!, 'sandbox processor'],
  [children[1]!.pid!, 'worker'],
  ...extraProcessNames,
]);
// The floor right before and after the submit scenarios: ratios to it are what count (absolute times drift).
const measureFloorNow = () =>
  measureFloors({ temporalAddress: servers.temporalAddress, namespace: config.temporalNamespace, taskQueue: childEnv.TEMPORAL_TASK_QUEUE, durationMs: durationSeconds * 1000, concurrency: [1, 64], workflowStackTraceFrames: config.workflowStackTraceFrames, workerTuning: workerTuningOf(hostedWorkerConfig(config)), processNames });
const floorsBefore = process.env.BENCH_ONLY ? [] : await measureFloorNow();

const auth = { authorization: `Bearer ${apiKey}`, clientid: clientId, useremail: 'bench@example.com' };
const rows: string[] = [];
const cpuRows: string[] = [];
const submitFigures = new Map<number, autocannon.Result>();
for (const scenario of scenarios(auth, productId).filter((s) => !process.env.BENCH_ONLY || s.name.includes(process.env.BENCH_ONLY))) {
  for (const connections of scenario.concurrency.filter((c) => !process.env.BENCH_CONCURRENCY || String(c) === process.env.BENCH_CONCURRENCY)) {
    await runOnce(scenario, 1, 2); // warm-up
    const cpuBefore = snapshotCpu(processNames);
    const result = await runOnce(scenario, connections, durationSeconds);
    if (scenario.name.includes('approved submit')) {
      submitFigures.set(connections, result);
      const perRequest = cpuPerRequest(cpuBefore, snapshotCpu(processNames), result.requests.total);
      const total = perRequest.reduce((sum, [, ms]) => sum + ms, 0);
      cpuRows.push(`| ${connections} | ${total.toFixed(1)} | ${perRequest.map(([group, ms]) => `${group} ${ms.toFixed(1)}`).join(', ')} |`);
    }
    process.stderr.write(`${scenario.name} c=${connections}: p50 ${result.latency.p50} ms, ${Math.round(result.requests.average)}/s\n`);
    rows.push(
      `| ${scenario.name} | ${connections} | ${result.latency.p50} | ${result.latency.p99} | ${Math.round(result.requests.average)} | ${result.non2xx + result.errors} |`,
    );
  }
}

// Approved submits spread over every gateway at once (one load generator per gateway, the concurrency split evenly).
const spreadRows: string[] = [];
if (extraGatewayUrls.length > 0) {
  const submit = scenarios(auth, productId)[0]!;
  for (const connections of [processCount, 64]) {
    const results = await Promise.all(
      [baseUrl, ...extraGatewayUrls].map((url) => autocannon({ url: `${url}${submit.path}`, method: submit.method, headers: submit.headers, body: submit.body, connections: Math.max(1, Math.round(connections / processCount)), duration: durationSeconds })),
    );
    const perSecond = results.reduce((sum, r) => sum + r.requests.average, 0);
    const errors = results.reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    spreadRows.push(`| approved submit over ${processCount} gateways and ${processCount} workers | ${connections} | ${results.map((r) => r.latency.p50).join(' / ')} | ${results.map((r) => r.latency.p99).join(' / ')} | ${Math.round(perSecond)} | ${errors} |`);
  }
}

const memoryRows: string[] = [];
if (memoryRunSeconds > 0) {
  const submit = scenarios(auth, productId)[0]!;
  const before = [residentMiB(gateway.pid!), residentMiB(children[1]!.pid!)];
  const result = await runOnce(submit, 64, memoryRunSeconds);
  const after = [residentMiB(gateway.pid!), residentMiB(children[1]!.pid!)];
  memoryRows.push(
    `| gateway | ${before[0]} | ${after[0]} |`,
    `| worker | ${before[1]} | ${after[1]} |`,
    `| (${memoryRunSeconds} s at concurrency 64: ${result.requests.total} submits, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.non2xx + result.errors} errors) | | |`,
  );
}

/** Resident memory of a process in MiB, from /proc (Linux). */
function residentMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}

const flowRows: string[] = [];
for (const concurrency of [1, 16]) {
  await threeDSecureFlow();
  const result = await closedLoop({ concurrency, durationMs: durationSeconds * 1000, iteration: threeDSecureFlow });
  flowRows.push(`| 3DS submit + challenge + completion | ${concurrency} | ${result.p50.toFixed(1)} | ${result.p99.toFixed(1)} | ${result.perSecond.toFixed(0)} | ${result.errors} |`);
}

/** One 3-D Secure checkout as a client runs it: submit (Pending), cardholder answers, /3ds. */
async function threeDSecureFlow() {
  const partnerSession = `bench-${randomUUID().slice(0, 12)}`;
  const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json', authorization: apiKey }, body: JSON.stringify(body) });
  const pending = (await (await fetch(`${baseUrl}/api/${productId}`, json({ ...benchSubmitBody(THREE_DS_CARD), partnerSession, threeDSecure: { enabled: true } }))).json()) as { info: string; threeDSecureId: string };
  if (pending.info !== 'Pending') throw new Error(`expected Pending, got ${pending.info}`);
  const redirect = await fetch(`${baseUrl}/3ds/${pending.threeDSecureId}`, { redirect: 'manual' });
  await fetch(redirect.headers.get('location')!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ outcome: 'authenticate' }) });
  const done = (await (await fetch(`${baseUrl}/api/${productId}/3ds`, json({ threeDSecureId: pending.threeDSecureId, partnerSession }))).json()) as { info: string };
  if (done.info !== 'Success') throw new Error(`expected Success, got ${done.info}`);
}

const floorsAfter = process.env.BENCH_ONLY ? [] : await measureFloorNow();

process.stdout.write(
  [
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${durationSeconds} s per run`,
    '',
    '| scenario | concurrency | p50 ms | p99 ms | requests/s | errors |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    ...spreadRows,
    ...flowRows,
    ...[...floorsBefore, ...floorsAfter].map((f) => `| ${f.name} | ${f.concurrency} | ${f.p50.toFixed(1)} | ${f.p99.toFixed(1)} | ${f.perSecond.toFixed(0)} | ${f.errors} |`),
    '',
    ...floorRatios(floorsBefore, floorsAfter),
    '',
    ...(memoryRows.length > 0 ? ['Resident memory (MiB) around the memory run:', '', '| process | before | after |', '| --- | --- | --- |', ...memoryRows, ''] : []),
    'CPU per approved submit (ms of CPU time per request, from /proc, every process on the machine):',
    '',
    '| concurrency | total | by process |',
    '| --- | --- | --- |',
    ...cpuRows,
    '',
    'CPU per floor workflow (ms of CPU time per workflow; the bench process hosts the eager floor\'s worker):',
    '',
    '| floor | concurrency | total | by process |',
    '| --- | --- | --- | --- |',
    ...floorsBefore.map((f) => `| ${f.name} | ${f.concurrency} | ${f.cpu.reduce((sum, [, ms]) => sum + ms, 0).toFixed(1)} | ${f.cpu.map(([group, ms]) => `${group} ${ms.toFixed(1)}`).join(', ')} |`),
    '',
    'The approved submit of median time among 21 in a row, from its workflow history:',
    '',
    ...phaseRows,
    '',
  ].join('\n'),
);

/** The approved submit as a multiple of each floor (both runs averaged): p50 at concurrency 1, requests/s at 64. */
function floorRatios(before: FloorFigures[], after: FloorFigures[]): string[] {
  const submit1 = submitFigures.get(1);
  const submit64 = submitFigures.get(64);
  if (!submit1 || !submit64 || before.length === 0) return [];
  const lines = ['| floor | submit p50 / floor p50 (c=1) | submit req/s / floor req/s (c=64) |', '| --- | --- | --- |'];
  for (const name of [...new Set(before.map((f) => f.name))]) {
    const mean = (concurrency: number, pick: (f: FloorFigures) => number) => {
      const runs = [...before, ...after].filter((f) => f.name === name && f.concurrency === concurrency).map(pick);
      return runs.reduce((a, b) => a + b, 0) / runs.length;
    };
    lines.push(`| ${name} | ${(submit1.latency.p50 / mean(1, (f) => f.p50)).toFixed(2)} | ${(submit64.requests.average / mean(64, (f) => f.perSecond)).toFixed(2)} |`);
  }
  return lines;
}

for (const child of children) await stopChild(child);
await servers.stop();

function runOnce(scenario: Scenario, connections: number, duration: number): Promise<autocannon.Result> {
  return autocannon({
    url: `${baseUrl}${scenario.path}`,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    connections,
    duration,
  });
}
