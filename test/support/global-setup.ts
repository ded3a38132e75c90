import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../scripts/local-stack/embedded-postgres.ts';
import { migrate, openOrm } from '../../data/orm.ts';
import { startTemporalDevServer } from '../../scripts/local-stack/temporal-dev-server.ts';
import { ensureTemporalCli } from '../../scripts/local-stack/temporal-cli.ts';
import { freePort } from './free-port.ts';
import { startSandboxProcessor } from '../../sandbox/processor-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    temporalAddress: string;
    sandboxProcessorUrl: string;
  }
}

/**
 * Starts the real servers the suites run against: PostgreSQL (TEST_DATABASE_URL's server, or an
 * embedded one) with a fresh, migrated database, and a Temporal dev server (TEST_TEMPORAL_ADDRESS, or
 * the CLI started here), and the sandbox card processor. Nothing is mocked.
 */
export default async function setup(project: TestProject) {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'payments-test-'));
  // Embedded PostgreSQL runs as an unprivileged user when we are root; it must reach its data dir.
  chmodSync(scratch, 0o755);
  const stops: (() => Promise<void>)[] = [];

  const stopAll = async () => {
    for (const stop of stops) await stop();
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    let serverUrl = process.env.TEST_DATABASE_URL;
    if (!serverUrl) {
      const embedded = await startEmbeddedPostgres({ dataDir: scratch, port: await freePort(), database: 'postgres_unused' });
      stops.push(embedded.stop);
      serverUrl = embedded.url;
    }
    const databaseName = `payments_test_${process.pid}`;
    const databaseUrl = await createFreshDatabase(serverUrl, databaseName);
    // On a server of the user's own, the run's database goes with the run (an embedded server goes whole).
    if (process.env.TEST_DATABASE_URL) stops.push(() => dropDatabase(process.env.TEST_DATABASE_URL!, databaseName));
    const orm = await openOrm({ databaseUrl });
    await migrate(orm);
    await orm.close();

    let temporalAddress = process.env.TEST_TEMPORAL_ADDRESS;
    if (!temporalAddress) {
      const temporal = await startTemporalDevServer({
        // Installs the CLI into the checkout's .data/tools once when none is on PATH; later runs reuse it.
        cliPath: ensureTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH, log: (line) => process.stdout.write(`${line}\n`) }),
        dataDir: path.join(scratch, 'temporal'),
        port: await freePort(),
        uiPort: await freePort(),
        namespace: 'default',
      });
      stops.unshift(temporal.stop);
      temporalAddress = temporal.address;
    }

    // Slow answers (amount .98) outlast the tests' 1 s processor timeout.
    const sandbox = await startSandboxProcessor({ port: 0, slowResponseMs: 2_500 });
    stops.unshift(sandbox.close);

    project.provide('databaseUrl', databaseUrl);
    project.provide('sandboxProcessorUrl', sandbox.url);
    project.provide('temporalAddress', temporalAddress);
  } catch (error) {
    await stopAll(); // vitest runs no teardown for a setup that failed
    throw error;
  }

  return stopAll;
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const admin = await openOrm({ databaseUrl: serverUrl, poolSize: 1 });
  try {
    await admin.em.fork().execute(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.close();
  }
}

async function createFreshDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = await openOrm({ databaseUrl: serverUrl, poolSize: 1 });
  await admin.em.fork().execute(`drop database if exists "${name}" with (force)`);
  await admin.em.fork().execute(`create database "${name}"`);
  await admin.close();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
