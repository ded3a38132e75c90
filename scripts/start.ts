/**
 * `npm start`: one command for a whole local product. Runs embedded PostgreSQL and the Temporal dev
 * server when no addresses are configured, applies migrations, provisions a demo tenant on an empty
 * database, runs a webhook receiver for it, supervises sandbox, worker and gateway, and prints where
 * everything is. Ctrl-C (or SIGTERM) stops it all, each process once, in order.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, gatewayBaseUrl } from '../platform/config.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardFingerprinter } from '../domain/crypto/card-vault.ts';
import { migrate, openOrm } from '../data/orm.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision, type TenantProvisioningResult } from '../services/provisioning/provision.ts';
import { Tenant } from '../schema/entities/index.ts';
import { REPO_ROOT, spawnEntry } from './child-process.ts';
import { continueInOwnProcessGroup } from './local-stack/own-process-group.ts';
import { ensureLocalServers } from './local-stack/local-runtime.ts';
import {
  describeCredentials,
  developmentEncryptionKey,
  developmentOperatorToken,
  isProductionMode,
  readDevCredentials,
  storeDemoCredentials,
} from './local-stack/dev-credentials.ts';
import { openLogFiles } from './local-stack/log-files.ts';
import { requireFreePort } from './local-stack/free-ports.ts';
import { claimDataDir } from './local-stack/leftovers.ts';
import { supervise } from './local-stack/supervisor.ts';
import { devReceiverUrl, startDevWebhookReceiver } from './dev-webhook-receiver.ts';
import { startDevInbox } from './local-stack/dev-inbox.ts';

const launcher = await continueInOwnProcessGroup();

const config = configOrExit(() => loadConfig());
const production = isProductionMode();
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Stops, in reverse order of start: gateway, worker, sandbox, webhook receiver, Temporal, PostgreSQL. */
const stops: (() => Promise<void>)[] = [];
let stopping: Promise<void> | undefined;
function stopAll(exitCode: number): Promise<void> {
  stopping ??= (async () => {
    await startup.catch(() => {}); // a step under way finishes and registers its stop first
    for (const stop of stops.reverse()) await stop().catch((error: Error) => say(`while stopping: ${error.message}`));
    process.exit(exitCode);
  })();
  return stopping;
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stopAll(0));
launcher.onLauncherGone(() => void stopAll(0));

const startup = start();
startup.catch((error: Error) => {
  say(`npm start failed: ${error.message}`);
  void stopAll(1);
});

async function start(): Promise<void> {
  // Before anything starts or is written (the logs of the run being looked into are not rotated away): a gateway or sandbox that
  // cannot listen would be restarted until npm start gives up.
  await requireFreePort(config.host, config.port, 'PORT');
  if (!config.sandboxProcessorUrl) await requireFreePort(config.sandboxHost, config.sandboxProcessorPort, 'SANDBOX_PROCESSOR_PORT');
  // The webhook receiver and the mail inbox run in this process: a port of theirs taken would stop it only after
  // PostgreSQL and Temporal started, in the system's words.
  await requireFreePort('127.0.0.1', config.devWebhookReceiverPort, 'DEV_WEBHOOK_RECEIVER_PORT');
  if (!config.smtpUrl) {
    await requireFreePort('127.0.0.1', config.devInboxSmtpPort, 'DEV_INBOX_SMTP_PORT');
    await requireFreePort('127.0.0.1', config.devInboxWebPort, 'DEV_INBOX_WEB_PORT');
  }
  // One start per DATA_DIR: it owns the servers there, and takes over those an earlier start killed outright left.
  const releaseDataDir = claimDataDir(config.dataDir, 'scripts/start.ts');
  stops.push(async () => releaseDataDir());
  // Before any server starts, so production mode without its secrets in the environment fails first; after the ports
  // and the claim, so a start refused for them writes no secrets into a DATA_DIR it never used.
  const encryptionKey = config.dataEncryptionKey?.toString('base64') ?? developmentEncryptionKey(config.dataDir);
  const operatorToken = config.operatorToken ?? developmentOperatorToken(config.dataDir);
  const logs = openLogFiles(path.resolve(config.dataDir, 'logs'), ['temporal', 'sandbox', 'worker', 'gateway']);
  stops.push(async () => logs.close());

  const local = [!config.databaseUrl && 'PostgreSQL', !config.temporalAddress && 'Temporal'].filter(Boolean);
  if (local.length > 0) say(`Starting ${local.join(' and ')}…`);
  const servers = await ensureLocalServers(config, {
    temporal: true,
    say,
    temporalLog: (text) => logs.write('temporal', text),
    adoptLeftovers: true,
    watch: {
      report: (line) => say(`${line} (logs: ${logs.dir})`),
      giveUp: (reason) => {
        say(`npm start stops: ${reason}; run it again (logs: ${logs.dir})`);
        void stopAll(1);
      },
    },
  });
  stops.push(servers.stop);
  if (stopping) return;

  const receiverUrl = devReceiverUrl(config.devWebhookReceiverPort);

  const provisioned = await migrateAndProvisionDemo(servers.databaseUrl, encryptionKey, receiverUrl);
  if (provisioned && !production) storeDemoCredentials(config.dataDir, provisioned);
  const demo = production ? provisioned : readDevCredentials(config.dataDir).demo;
  if (stopping) return;

  const receiver = await startDevWebhookReceiver({ host: '127.0.0.1', port: config.devWebhookReceiverPort, secret: demo?.[0]?.webhookEndpoints[0]?.secret, print: say });
  stops.push(receiver.close);

  // Without SMTP_URL, e-mail goes to a local inbox with a web page instead of leaving the machine.
  const inbox = config.smtpUrl
    ? undefined
    : await startDevInbox({ host: '127.0.0.1', smtpPort: config.devInboxSmtpPort, webPort: config.devInboxWebPort, mailDirectory: path.resolve(config.dataDir, 'maildev') });
  if (inbox) stops.push(inbox.stop);

  const sandboxUrl = config.sandboxProcessorUrl ?? `http://127.0.0.1:${config.sandboxProcessorPort}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX_PROCESSOR_URL: sandboxUrl,
    DATABASE_URL: servers.databaseUrl,
    TEMPORAL_ADDRESS: servers.temporalAddress,
    DATA_ENCRYPTION_KEY: encryptionKey,
    OPERATOR_TOKEN: operatorToken,
    ...(inbox ? { SMTP_URL: inbox.smtpUrl } : {}),
    ...(servers.temporalUiUrl ? { TEMPORAL_UI_URL: servers.temporalUiUrl } : {}),
  };
  // Where each process's run began in its log: a process that exits on its own is reported with what it last said.
  const logFrom = new Map<string, number>();
  const logged = (name: string, entry: string, stopGraceMs: number) => ({
    name,
    stopGraceMs,
    start: () => {
      logFrom.set(name, logs.size(name));
      return spawnEntry(entry, env, logs.stdio(name));
    },
  });
  const supervisor = supervise(
    [
      ...(config.sandboxProcessorUrl ? [] : [logged('sandbox', 'sandbox/main.ts', 5_000)]),
      logged('worker', 'worker/main.ts', 20_000),
      logged('gateway', 'api/main.ts', 20_000),
    ],
    {
      maxCrashes: 5,
      crashWindowMs: 60_000,
      firstRestartDelayMs: 500,
      report: (line) => say(`${line} (logs: ${logs.dir})`),
      // A process killed by a signal said nothing of it; an earlier error of its run would mislead.
      explain: (exit) => (exit.signal ? undefined : logs.lastWords(exit.name, logFrom.get(exit.name) ?? 0)),
      giveUp: () => void stopAll(1),
    },
  );
  stops.push(supervisor.stop);

  const base = gatewayBaseUrl(config);
  if (!(await waitForReady(`${base}/readyz`))) {
    if (!stopping) say(`The gateway is not ready after 120 s; see ${path.join(logs.dir, 'gateway.log')} and ${base}/readyz`);
    return;
  }
  say('');
  say(`REST API         ${base}/api/{productId}`);
  say(`GraphQL          ${base}/graphql`);
  say(`API reference    ${base}/docs`);
  say(`Temporal UI      ${servers.temporalUiUrl ?? '(set TEMPORAL_UI_URL to print it)'}`);
  say(`Sandbox          ${sandboxUrl}   (test cards: README, "Sandbox card processor")`);
  say(`Webhooks         ${receiver.url}   (the demo endpoint; each event is printed below)`);
  say(`E-mail API       ${base}/api/email   (and /api/email/batch)`);
  say(inbox ? `Mail inbox       ${inbox.webUrl}   (every e-mail sent, rendered; SMTP ${inbox.smtpUrl})` : 'Mail             sent through SMTP_URL');
  say('');
  // Secrets set in the environment (always so in production) are named, not printed.
  const shown = { operatorToken: config.operatorToken === undefined ? operatorToken : undefined, dataEncryptionKey: config.dataEncryptionKey === undefined ? encryptionKey : undefined };
  for (const line of describeCredentials({ ...shown, demo })) say(line);
  say('');
  say(`Logs             ${logs.dir}/ (${logs.names.map((name) => `${name}.log`).join(', ')})`);
  say(production ? 'Press Ctrl-C to stop.' : 'Press Ctrl-C to stop. `npm run credentials` prints the keys again.');
}

/** Applies migrations; on an empty database provisions the demo tenant, its webhook endpoint pointed at the local receiver. */
async function migrateAndProvisionDemo(databaseUrl: string, encryptionKey: string, receiverUrl: string): Promise<TenantProvisioningResult[] | undefined> {
  const orm = await openOrm({ databaseUrl });
  try {
    const applied = await migrate(orm);
    if (applied.length > 0) say(`Applied migrations: ${applied.join(', ')}`);
    if ((await orm.em.fork().count(Tenant, {})) > 0) return undefined;
    const fixture = parseFixture(JSON.parse(readFileSync(path.join(REPO_ROOT, 'fixtures/demo.json'), 'utf8')));
    for (const tenant of fixture.tenants) for (const endpoint of tenant.webhookEndpoints ?? []) endpoint.url = receiverUrl;
    const key = Buffer.from(encryptionKey, 'base64');
    return await provision({ em: orm.em.fork(), secretBox: createSecretBox(key), fingerprintCard: createCardFingerprinter(key), actor: 'operator:npm-start' }, fixture);
  } finally {
    await orm.close();
  }
}

async function waitForReady(url: string): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && !stopping) {
    try {
      if ((await fetch(url)).ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return false;
}
