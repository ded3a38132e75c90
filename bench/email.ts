/**
 * `npm run bench:email [-- --duration 10] [-- --concurrency 4]`: batches of 100 e-mails, end to end. Starts its own
 * PostgreSQL and Temporal (under .data/bench-email unless DATABASE_URL/TEMPORAL_ADDRESS are set), an SMTP sink in
 * this process (smtp-server, accepting everything), and the gateway and the worker as separate processes. Posts
 * batches of 100 (string template, one recipient each) for the duration, then waits until the sink has every
 * message. Prints the batch acceptance latency (p50/p99), e-mails accepted per second by the API, and e-mails
 * delivered per second from the first request to the last message received.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardFingerprinter } from '../domain/crypto/card-vault.ts';
import { startBenchServers } from './bench-servers.ts';
import { migrate, openOrm } from '../data/orm.ts';
import { spawnEntry, stopChild } from '../scripts/child-process.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { closedLoop } from './closed-loop.ts';

const argument = (name: string) => Number(process.argv[process.argv.indexOf(name) + 1]) || undefined;
const durationSeconds = argument('--duration') ?? 10;
const concurrencies = process.argv.includes('--concurrency') ? [argument('--concurrency')!] : [1, 4];
const BATCH = 100;
const port = 3920;
const { servers, children } = await startBenchServers({ folder: 'bench-email', postgresPort: 54359, temporal: { port: 7329, uiPort: 8329 } });
const encryptionKey = randomBytes(32).toString('base64');

// The sink: a real SMTP exchange per message, nothing kept but the count.
let delivered = 0;
let lastDeliveryAt = 0;
const sink = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      delivered++;
      lastDeliveryAt = performance.now();
      callback();
    });
  },
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', () => resolve()));
const smtpUrl = `smtp://127.0.0.1:${(sink.server.address() as { port: number }).port}`;

const orm = await openOrm({ databaseUrl: servers.databaseUrl });
await migrate(orm);
const slug = `bench-email-${randomUUID().slice(0, 8)}`;
const tenantKey = randomUUID();
await provision(
  { em: orm.em.fork(), secretBox: createSecretBox(Buffer.from(encryptionKey, 'base64')), fingerprintCard: createCardFingerprinter(Buffer.from(encryptionKey, 'base64')), actor: 'bench' },
  // No practical rate limit: the bench measures throughput, not the limiter (e-mail requests count per tenant).
  parseFixture({ tenants: [{ slug, name: 'Bench e-mail', clientId: slug, rateLimitPerMinute: 100_000_000, email: { tenantKey, senderDomains: ['bench.example'] } }] }),
);
await orm.close();

const childEnv = {
  ...process.env,
  DATABASE_URL: servers.databaseUrl,
  TEMPORAL_ADDRESS: servers.temporalAddress,
  TEMPORAL_TASK_QUEUE: `bench-${slug}`,
  DATA_ENCRYPTION_KEY: encryptionKey,
  SMTP_URL: smtpUrl,
  SMTP_POOL_SIZE: process.env.SMTP_POOL_SIZE ?? '10',
  PORT: String(port),
  LOG_LEVEL: 'warn',
};
const worker = spawnEntry('worker/main.ts', childEnv, 'inherit');
const gateway = spawnEntry('api/main.ts', childEnv, 'inherit');
children.push(gateway, worker);
process.on('exit', () => {
  gateway.kill('SIGKILL');
  worker.kill('SIGKILL');
});
const baseUrl = `http://127.0.0.1:${port}`;
await waitFor(async () => (await fetch(`${baseUrl}/readyz`)).ok, 120_000);

const batchBody = () =>
  JSON.stringify({
    tenant_key: tenantKey,
    emails: Array.from({ length: BATCH }, (_, index) => ({
      from: 'Bench <news@bench.example>',
      to: `reader-${index}@inbox.example`,
      subject: 'Weekly news',
      templateType: 'string',
      templateContent: '<h1>Hello {{name}}</h1>{{#if vip}}<p>Thanks for being a member.</p>{{/if}}<p>Issue {{issue}}</p>',
      data: { name: `Reader ${index}`, vip: index % 2 === 0, issue: randomUUID() },
    })),
  });

async function postBatch(): Promise<void> {
  const response = await fetch(`${baseUrl}/api/email/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: batchBody() });
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
}

// Warm-up: compile caches, JIT, SMTP connections.
await closedLoop({ concurrency: 1, durationMs: 2_000, iteration: postBatch });
await waitFor(async () => delivered >= 0 && (await settled()), 60_000);

const rows: string[] = [];
for (const concurrency of concurrencies) {
  const before = delivered;
  const started = performance.now();
  const result = await closedLoop({ concurrency, durationMs: durationSeconds * 1000, iteration: postBatch });
  const acceptedEmails = result.count * BATCH;
  await waitFor(async () => delivered - before >= acceptedEmails, 300_000);
  const deliveredPerSecond = acceptedEmails / ((lastDeliveryAt - started) / 1000);
  rows.push(
    `| batches of ${BATCH} | ${concurrency} | ${result.p50.toFixed(0)} | ${result.p99.toFixed(0)} | ${(result.perSecond * BATCH).toFixed(0)} | ${deliveredPerSecond.toFixed(0)} | ${result.errors} |`,
  );
  process.stderr.write(`${rows.at(-1)}\n`);
}

process.stdout.write('\n| scenario | concurrency | batch accept p50 ms | p99 ms | e-mails accepted/s | e-mails delivered/s | errors |\n| --- | --- | --- | --- | --- | --- | --- |\n');
process.stdout.write(`${rows.join('\n')}\n`);

await stopChild(gateway);
await stopChild(worker, 20_000);
await new Promise<void>((resolve) => sink.close(() => resolve()));
await servers.stop();

/** True once no message has arrived for a second (the warm-up's e-mails are all in). */
async function settled(): Promise<boolean> {
  const seen = delivered;
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return delivered === seen;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
