/**
 * `npm start`: one command for a whole local product. Runs embedded PostgreSQL and the Temporal dev
 * server when no addresses are configured, applies migrations, provisions a demo tenant on an empty
 * database, starts worker and gateway, and prints where everything is. Ctrl-C stops it all.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { loadConfig, gatewayBaseUrl } from '../platform/config.ts';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardVault } from '../domain/crypto/card-vault.ts';
import { developmentEncryptionKey, ensureLocalServers } from './local-stack/local-runtime.ts';
import { migrate, openOrm } from '../data/orm.ts';
import { stopChild } from './local-stack/temporal-dev-server.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { Tenant } from '../schema/entities/index.ts';
import { REPO_ROOT, spawnEntry } from './child-process.ts';

const config = loadConfig();
const say = (line: string) => process.stdout.write(`${line}\n`);

say('Starting local servers…');
const servers = await ensureLocalServers(config, { temporal: true });
const encryptionKey = process.env.DATA_ENCRYPTION_KEY || developmentEncryptionKey(config.dataDir);
const operatorToken = process.env.OPERATOR_TOKEN || randomBytes(24).toString('base64url');

const orm = await openOrm({ databaseUrl: servers.databaseUrl });
const applied = await migrate(orm);
if (applied.length > 0) say(`Applied migrations: ${applied.join(', ')}`);
let demo: unknown;
if ((await orm.em.fork().count(Tenant, {})) === 0) {
  const fixture = parseFixture(JSON.parse(readFileSync(path.join(REPO_ROOT, 'fixtures/demo.json'), 'utf8')));
  demo = await provision({
    em: orm.em.fork(),
    secretBox: createSecretBox(Buffer.from(encryptionKey, 'base64')),
    fingerprintCard: createCardVault(Buffer.from(encryptionKey, 'base64')).fingerprint,
    actor: 'operator:npm-start',
  }, fixture);
}
await orm.close();

const sandboxUrl = config.sandboxProcessorUrl ?? `http://127.0.0.1:${config.sandboxProcessorPort}`;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  SANDBOX_PROCESSOR_URL: sandboxUrl,
  DATABASE_URL: servers.databaseUrl,
  TEMPORAL_ADDRESS: servers.temporalAddress,
  DATA_ENCRYPTION_KEY: encryptionKey,
  OPERATOR_TOKEN: operatorToken,
};
const children: ChildProcess[] = [
  ...(config.sandboxProcessorUrl ? [] : [spawnEntry('sandbox/main.ts', { ...env, SANDBOX_PORT: String(config.sandboxProcessorPort) })]),
  spawnEntry('worker/main.ts', env),
  spawnEntry('api/main.ts', env),
];

let stopping = false;
async function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  await Promise.all(children.map((child) => stopChild(child)));
  await servers.stop();
  process.exit(code);
}
for (const child of children) child.once('exit', (code) => void stopAll(code ?? 1));
process.once('SIGINT', () => void stopAll(0));
process.once('SIGTERM', () => void stopAll(0));

const base = gatewayBaseUrl(config);
await waitForReady(`${base}/readyz`);
say('');
say(`REST API        ${base}/api/{productId}  (status list: ${base}/api/admin/statuses)`);
say(`GraphQL         ${base}/graphql`);
say(`OpenAPI         ${base}/openapi.json`);
say(`Temporal UI     ${servers.temporalUiUrl ?? '(set TEMPORAL_UI_URL to print it)'}`);
say(`Sandbox         ${sandboxUrl}  (test cards: README)`);
say(`Operator token  ${operatorToken}`);
if (demo) say(`Demo tenant (keys are shown once):\n${JSON.stringify(demo, null, 2)}`);
say('Press Ctrl-C to stop.');

async function waitForReady(url: string) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline && !stopping) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  if (!stopping) say(`Gateway not ready after 90 s; see ${url}`);
}
