/**
 * `npm run bench [-- --duration 10]`: measures the gateway as a client sees it. Starts its own servers
 * (embedded PostgreSQL and Temporal dev server under .data/bench unless DATABASE_URL/TEMPORAL_ADDRESS
 * are set), runs the gateway as a separate process, provisions a bench tenant without a practical rate
 * limit, and drives load with autocannon. Prints p50/p99 latency and requests/s per scenario.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../infra/config.ts';
import { createSecretBox } from '../infra/crypto.ts';
import { createCardVault } from '../infra/card-vault.ts';
import { ensureLocalServers } from '../infra/local-runtime.ts';
import { migrate, openOrm } from '../infra/orm.ts';
import { stopChild } from '../infra/temporal-dev-server.ts';
import { parseFixture } from '../domain/provisioning/parse-fixture.ts';
import { provision } from '../domain/provisioning/provision.ts';
import { spawnEntry } from '../scripts/child-process.ts';
import { scenarios, type Scenario } from './scenarios.ts';

const durationSeconds = Number(process.argv[process.argv.indexOf('--duration') + 1]) || 10;
const port = 3900;
const config = loadConfig({
  ...process.env,
  DATA_DIR: path.resolve(process.env.DATA_DIR ?? '.data', 'bench'),
  EMBEDDED_POSTGRES_PORT: process.env.EMBEDDED_POSTGRES_PORT ?? '54339',
  TEMPORAL_DEV_PORT: process.env.TEMPORAL_DEV_PORT ?? '7299',
  TEMPORAL_UI_PORT: process.env.TEMPORAL_UI_PORT ?? '8299',
});
const servers = await ensureLocalServers(config, { temporal: true });
const encryptionKey = randomBytes(32).toString('base64');

const orm = await openOrm({ databaseUrl: servers.databaseUrl });
await migrate(orm);
const apiKey = `sk_bench_${randomUUID().replaceAll('-', '')}`;
const clientId = `bench-${randomUUID().slice(0, 8)}`;
await provision(
  { em: orm.em.fork(), secretBox: createSecretBox(Buffer.from(encryptionKey, 'base64')), fingerprintCard: createCardVault(Buffer.from(encryptionKey, 'base64')).fingerprint, actor: 'bench' },
  parseFixture({ tenants: [{ slug: clientId, name: 'Bench', clientId, rateLimitPerMinute: 100_000_000, apiKeys: [{ name: 'bench', value: apiKey }] }] }),
);
await orm.close();

const gateway = spawnEntry(
  'api/main.ts',
  {
    ...process.env,
    DATABASE_URL: servers.databaseUrl,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    DATA_ENCRYPTION_KEY: encryptionKey,
    PORT: String(port),
    LOG_LEVEL: 'warn',
  },
  'pipe',
);
const baseUrl = `http://127.0.0.1:${port}`;
await waitForHealth(`${baseUrl}/healthz`);

const auth = { authorization: `Bearer ${apiKey}`, clientid: clientId, useremail: 'bench@example.com' };
const rows: string[] = [];
for (const scenario of scenarios(auth)) {
  for (const connections of scenario.concurrency) {
    await runOnce(scenario, 1, 2); // warm-up
    const result = await runOnce(scenario, connections, durationSeconds);
    rows.push(
      `| ${scenario.name} | ${connections} | ${result.latency.p50} | ${result.latency.p99} | ${Math.round(result.requests.average)} | ${result.non2xx + result.errors} |`,
    );
  }
}

process.stdout.write(
  [
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${durationSeconds} s per run`,
    '',
    '| scenario | concurrency | p50 ms | p99 ms | requests/s | errors |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n'),
);

await stopChild(gateway);
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

async function waitForHealth(url: string) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not yet listening
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`gateway did not become healthy at ${url}`);
}
