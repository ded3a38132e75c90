/**
 * `npm run bench:leads [-- --duration 10] [-- --leads 1000000] [-- --runs 5]`: the customer-lead API as its callers see it.
 * Starts its own PostgreSQL (under .data/bench-leads unless DATABASE_URL is set) and Temporal (the gateway's
 * readiness needs one), stores a million leads for one tenant, runs the gateway as a separate process, and
 * drives with autocannon: upserts from many sessions and from one hot session (secret key, as a server
 * writes), and reads with each filter. Prints p50/p99 latency, requests/s and CPU per request by process per scenario.
 * `BENCH_ONLY=<text>` picks scenarios by name, `BENCH_CONCURRENCY=<n>` one concurrency, `BENCH_CPU_PROF=<dir>`
 * profiles the gateway.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardFingerprinter } from '../domain/crypto/card-vault.ts';
import { cpuPerRequest, snapshotCpu } from './cpu-usage.ts';
import { startBenchServers, waitForHealth } from './bench-servers.ts';
import { migrate, openOrm } from '../data/orm.ts';
import { spawnEntry, stopChild } from '../scripts/child-process.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';

const argument = (name: string) => Number(process.argv[process.argv.indexOf(name) + 1]) || undefined;
const durationSeconds = argument('--duration') ?? 10;
const storedLeads = argument('--leads') ?? 1_000_000;
/** Runs per scenario: the table shows the run of median throughput (the lower middle one of an even count), the range of all, and the errors of all. */
const runs = Math.max(1, Math.floor(argument('--runs') ?? 1));
const port = 3910;
const { servers, children } = await startBenchServers({ folder: 'bench-leads', postgresPort: 54349, temporal: { port: 7319, uiPort: 8319 } });
const encryptionKey = randomBytes(32).toString('base64');

const orm = await openOrm({ databaseUrl: servers.databaseUrl });
await migrate(orm);
// Earlier runs' tenants (and their million leads each) go, so every run measures the same table size.
await orm.em.fork().execute(`delete from tenants where slug like 'bench-leads-%'`);
const clientId = `bench-leads-${randomUUID().slice(0, 8)}`;
const secretKey = `sk_test_${randomBytes(24).toString('base64url')}`;
const [tenant] = await provision(
  {
    em: orm.em.fork(),
    secretBox: createSecretBox(Buffer.from(encryptionKey, 'base64')),
    fingerprintCard: createCardFingerprinter(Buffer.from(encryptionKey, 'base64')),
    actor: 'bench',
  },
  parseFixture({
    tenants: [
      {
        slug: clientId,
        name: 'Bench leads',
        clientId,
        rateLimitPerMinute: 100_000_000,
        applications: [{ slug: 'shop', name: 'Shop', allowedOrigins: ['https://shop.bench.example'] }],
        leads: { application: 'shop', environment: 'test', secretKey },
      },
    ],
  }),
);

// A million leads of one tenant: every fifth e-mail repeats, one in ten is paid, one in twenty has a
// subscription; updated_at spread over a year so the newest-first order has real work to do.
process.stderr.write(`Storing ${storedLeads} leads…\n`);
const seedStarted = performance.now();
const em = orm.em.fork();
await em.execute(
  `insert into customer_leads (id, tenant_id, application_id, environment, session_id, email, first_name, scans, tracking_fields,
                               status, transaction_id, order_id, amount, currency, subscription_id, paid_at, created_at, updated_at)
   select gen_random_uuid(), a.tenant_id, a.id, 'test', 'seed-' || i, 'buyer' || (i % (? / 5)) || '@example.com', 'Buyer',
          jsonb_build_array(jsonb_build_object('page', '/checkout')), jsonb_build_object('cfa_device', 'desktop'),
          case when i % 10 = 0 then 'paid' else 'lead' end,
          case when i % 10 = 0 then 'txn-' || i end,
          case when i % 10 = 0 then i end,
          case when i % 10 = 0 then 19.99 end,
          case when i % 10 = 0 then 'USD' end,
          case when i % 20 = 0 then i end,
          case when i % 10 = 0 then now() - (i % 525600) * interval '1 minute' end,
          now() - (i % 525600) * interval '1 minute', now() - (i % 525600) * interval '1 minute'
     from generate_series(1, ?) i, applications a
    where a.tenant_id = ? and a.slug = 'shop'`,
  [storedLeads, storedLeads, tenant!.id],
);
// The previous run's million leads are dead rows now: vacuum them, or every index read wades through them.
await em.execute('vacuum analyze customer_leads');
process.stderr.write(`Stored in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s\n`);
await orm.close();

const childEnv = {
  ...process.env,
  DATABASE_URL: servers.databaseUrl,
  TEMPORAL_ADDRESS: servers.temporalAddress,
  TEMPORAL_TASK_QUEUE: `bench-${clientId}`,
  DATA_ENCRYPTION_KEY: encryptionKey,
  PORT: String(port),
  LOG_LEVEL: 'warn',
  // BENCH_CPU_PROF=<dir>: the gateway writes a V8 CPU profile there when it exits (bench/profile-summary.ts reads it).
  ...(process.env.BENCH_CPU_PROF ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`.trim() } : {}),
};
const gateway = spawnEntry('api/main.ts', childEnv, 'inherit');
children.push(gateway);
process.on('exit', () => gateway.kill('SIGKILL'));
const baseUrl = `http://127.0.0.1:${port}`;
await waitForHealth(`${baseUrl}/healthz`);

interface LeadScenario {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** A body per request (each new session) or one body for all (the hot session). */
  readonly body?: () => string;
  readonly concurrency: readonly number[];
}

const LEADS = '/api/public/customer-leads';
const leadBody = (sessionId: string) => JSON.stringify({ email: 'bench@example.com', session_id: sessionId, first_name: 'Bench', scans: [{ page: '/checkout' }], cfa_device: 'desktop' });
const hotSession = `hot-${randomUUID()}`;
const query = (filter: Record<string, string>) => `${LEADS}?${new URLSearchParams({ limit: '50', ...filter }).toString()}`;
const sample = storedLeads - 7; // a seeded lead that exists whatever --leads is (not a multiple of 10 or 20)

const scenarios: LeadScenario[] = [
  { name: 'POST upsert, a new session each time', method: 'POST', path: LEADS, body: () => leadBody(`bench-${randomUUID()}`), concurrency: [1, 32] },
  { name: 'POST upsert, one hot session', method: 'POST', path: LEADS, body: () => leadBody(hotSession), concurrency: [1, 32] },
  { name: 'GET newest 50 (no filter)', method: 'GET', path: query({}), concurrency: [1, 32] },
  { name: 'GET by email', method: 'GET', path: query({ email: `buyer${sample % (storedLeads / 5)}@example.com` }), concurrency: [1, 32] },
  { name: 'GET by session_id', method: 'GET', path: query({ session_id: `seed-${sample}` }), concurrency: [1, 32] },
  { name: 'GET by status=paid', method: 'GET', path: query({ status: 'paid' }), concurrency: [1, 32] },
  { name: 'GET by transaction_id', method: 'GET', path: query({ transaction_id: `txn-${storedLeads - 10}` }), concurrency: [1, 32] },
  { name: 'GET by subscription_id', method: 'GET', path: query({ subscription_id: String(storedLeads - 20) }), concurrency: [1, 32] },
  { name: 'GET by email and status', method: 'GET', path: query({ email: `buyer${sample % (storedLeads / 5)}@example.com`, status: 'lead' }), concurrency: [1, 32] },
];

const rows: string[] = [];
for (const scenario of scenarios.filter((s) => !process.env.BENCH_ONLY || s.name.includes(process.env.BENCH_ONLY))) {
  for (const connections of scenario.concurrency.filter((c) => !process.env.BENCH_CONCURRENCY || String(c) === process.env.BENCH_CONCURRENCY)) {
    await runOnce(scenario, 1, 2); // warm-up
    const measured: { result: autocannon.Result; cpu: string }[] = [];
    for (let run = 0; run < runs; run++) {
      const named = new Map([[gateway.pid!, 'gateway'], [process.pid, 'load generator']]);
      const cpuBefore = snapshotCpu(named);
      const result = await runOnce(scenario, connections, durationSeconds);
      const cpu = cpuPerRequest(cpuBefore, snapshotCpu(named), result.requests.total)
        .filter(([, ms]) => ms >= 0.01)
        .map(([group, ms]) => `${group} ${ms.toFixed(2)}`)
        .join(', ');
      process.stderr.write(`${scenario.name} c=${connections}: p50 ${result.latency.p50} ms, ${Math.round(result.requests.average)}/s\n`);
      measured.push({ result, cpu });
    }
    // The run of median throughput stands for the scenario; the range shows how much the machine varied.
    measured.sort((a, b) => a.result.requests.average - b.result.requests.average);
    const { result, cpu } = measured[Math.floor((measured.length - 1) / 2)]!;
    const throughputs = measured.map((m) => Math.round(m.result.requests.average));
    const range = runs > 1 ? ` (${throughputs[0]}–${throughputs.at(-1)})` : '';
    const errors = measured.reduce((sum, m) => sum + m.result.non2xx + m.result.errors, 0);
    rows.push(`| ${scenario.name} | ${connections} | ${result.latency.p50} | ${result.latency.p99} | ${Math.round(result.requests.average)}${range} | ${errors} | ${cpu} |`);
  }
}

process.stdout.write(
  [
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${storedLeads} stored leads; ${durationSeconds} s per run${runs > 1 ? `, median of ${runs} runs (range)` : ''}`,
    '',
    '| scenario | concurrency | p50 ms | p99 ms | requests/s | errors | CPU ms per request |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n'),
);

const stopStarted = performance.now();
await stopChild(gateway, 30_000); // time to write a CPU profile
process.stderr.write(`gateway stopped in ${Math.round(performance.now() - stopStarted)} ms (exit ${gateway.exitCode} ${gateway.signalCode})\n`);
await servers.stop();

function runOnce(scenario: LeadScenario, connections: number, duration: number): Promise<autocannon.Result> {
  const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };
  return autocannon({
    url: `${baseUrl}${scenario.path}`,
    method: scenario.method,
    headers,
    connections,
    duration,
    // setupRequest runs per request: each write can carry its own session.
    requests: [{ setupRequest: (request) => (scenario.body ? { ...request, body: scenario.body() } : request) }],
  });
}
