import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureTemporalCli } from '../scripts/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../scripts/local-stack/temporal-dev-server.ts';
import { freePort } from './support/free-port.ts';

/**
 * `temporal server start-dev` picks its HTTP API port at random before it binds `--port`, and can pick a port
 * about to be taken (CI once saw it pick its own `--port`). The start tries again on "address already in use";
 * here a plain listener holds `--port` to make that happen on purpose.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function hold(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

async function devServerOptions(log: string[]) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-dev-server-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    cliPath: ensureTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH }),
    dataDir,
    port: await freePort(),
    uiPort: await freePort(),
    namespace: 'default',
    log: (line: string) => log.push(line),
  };
}

const retries = (log: string[]) => log.filter((line) => line.includes('found a port taken; starting again'));

describe('the Temporal dev server start', () => {
  it('starts again when a port it needs was taken, and answers once the port is free', async () => {
    const log: string[] = [];
    const options = await devServerOptions(log);
    const holder = await hold(options.port);
    const started = startTemporalDevServer({
      ...options,
      log: (line) => {
        log.push(line);
        // The first start has failed: free the port for the second.
        if (retries(log).length === 1 && holder.listening) holder.close();
      },
    });
    const server = await started;
    cleanups.push(() => server.stop());

    expect(retries(log)).toHaveLength(1);
    const connection = await Connection.connect({ address: server.address });
    cleanups.push(() => connection.close());
    const { serverVersion } = await connection.workflowService.getSystemInfo({});
    expect(serverVersion).toMatch(/^\d+\.\d+/);
  });

  it('gives up after three starts on a port that stays taken, with the CLI\'s own words', async () => {
    const log: string[] = [];
    const options = await devServerOptions(log);
    const holder = await hold(options.port);
    cleanups.push(() => new Promise<void>((resolve) => holder.close(() => resolve())));

    await expect(startTemporalDevServer(options)).rejects.toThrow(/exited:[\s\S]*address already in use/);
    expect(retries(log)).toHaveLength(2);
  });
});
