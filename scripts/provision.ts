/**
 * `npm run provision -- <fixture.json>`: applies a declarative, idempotent fixture and prints the
 * resulting ids (and any secret created by this run) as JSON on stdout. The format is in the README;
 * fixtures/demo.json is a complete example.
 */
import { readFileSync } from 'node:fs';
import { loadConfig } from '../platform/config.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardFingerprinter } from '../domain/crypto/card-vault.ts';
import { developmentEncryptionKey } from './local-stack/dev-credentials.ts';
import { ensureLocalServers } from './local-stack/local-runtime.ts';
import { devReceiverUrl, pointAtDevReceiver } from './dev-webhook-receiver.ts';
import { migrate, openOrm } from '../data/orm.ts';
import { DomainError } from '../domain/errors.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';

const file = process.argv[2];
if (!file) {
  process.stderr.write('Usage: npm run provision -- <fixture.json>\n');
  process.exit(2);
}

const config = configOrExit(() => loadConfig());
let raw: unknown;
try {
  raw = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  process.stderr.write(`Cannot read ${file}: ${(error as Error).message}\n`);
  process.exit(2);
}

const servers = await ensureLocalServers(config, { temporal: false });
let exitCode = 0;
const key = config.dataEncryptionKey ?? Buffer.from(developmentEncryptionKey(config.dataDir), 'base64');
const orm = await openOrm({ databaseUrl: servers.databaseUrl });
try {
  await migrate(orm);
  const fixture = parseFixture(raw);
  // Beside the local stack only: a fixture sent to a database of one's own keeps the addresses it names.
  if (!config.databaseUrl) pointAtDevReceiver(fixture, devReceiverUrl(config.devWebhookReceiverPort));
  const results = await provision({ em: orm.em.fork(), secretBox: createSecretBox(key), fingerprintCard: createCardFingerprinter(key), actor: 'operator:cli' }, fixture);
  process.stdout.write(`${JSON.stringify({ tenants: results }, null, 2)}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof DomainError ? error.message : (error as Error).stack}\n`);
  exitCode = 1;
} finally {
  await orm.close();
  await servers.stop();
}
process.exit(exitCode);
