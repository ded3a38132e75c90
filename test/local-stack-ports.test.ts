import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { claimDataDir } from '../scripts/local-stack/leftovers.ts';
import { loadConfig } from '../platform/config.ts';
import { requireFreePort } from '../scripts/local-stack/free-ports.ts';
import { ensureLocalServers } from '../scripts/local-stack/local-runtime.ts';

/** A port held by a program that accepts connections and never says anything (not PostgreSQL, not a gateway). */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const held: Server[] = [];
afterEach(() => {
  for (const server of held.splice(0)) server.close();
});

describe('npm start, where its ports are taken', () => {
  it("refuses a gateway port in use before starting anything, naming the setting", async () => {
    const { server, port } = await holdPort();
    held.push(server);
    await expect(requireFreePort('127.0.0.1', port, 'PORT')).rejects.toThrow(
      `PORT ${port} is in use on 127.0.0.1 (an earlier npm start still running, or another program): stop it, or set PORT to a free port`,
    );
    server.close();
    await expect(requireFreePort('127.0.0.1', port, 'PORT')).resolves.toBeUndefined();
  });

  it("names a program on the embedded PostgreSQL's port that is not this DATA_DIR's PostgreSQL, instead of using or waiting on it", async () => {
    const { server, port } = await holdPort();
    held.push(server);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ports-'));
    try {
      const config = loadConfig({ DATA_DIR: dataDir, EMBEDDED_POSTGRES_PORT: String(port) });
      await expect(ensureLocalServers(config, { temporal: false })).rejects.toThrow(
        `Port ${port} (EMBEDDED_POSTGRES_PORT) is taken by something other than the PostgreSQL of DATA_DIR ${dataDir}`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('names the port the PostgreSQL of DATA_DIR runs on when EMBEDDED_POSTGRES_PORT names another, instead of starting a second one on its data', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ports-'));
    const databaseDir = path.join(dataDir, 'postgres');
    // A stand-in for that server: a live process whose command line names its data directory, in its postmaster.pid.
    const postmaster = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', '-D', databaseDir], { stdio: 'ignore' });
    try {
      mkdirSync(databaseDir);
      writeFileSync(path.join(databaseDir, 'postmaster.pid'), `${postmaster.pid}\n${databaseDir}\n1700000000\n54391\n`);
      const free = await holdPort();
      await new Promise((resolve) => free.server.close(resolve));
      const config = loadConfig({ DATA_DIR: dataDir, EMBEDDED_POSTGRES_PORT: String(free.port) });
      await expect(ensureLocalServers(config, { temporal: false })).rejects.toThrow(
        `The PostgreSQL of DATA_DIR ${dataDir} runs on port 54391, not on EMBEDDED_POSTGRES_PORT (${free.port}): set EMBEDDED_POSTGRES_PORT=54391 to use it`,
      );
    } finally {
      postmaster.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("names a program on the Temporal dev server's port, instead of crash-looping the worker against it", async () => {
    const { server, port } = await holdPort();
    held.push(server);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ports-'));
    try {
      const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: inject('databaseUrl'), TEMPORAL_DEV_PORT: String(port) });
      await expect(ensureLocalServers(config, { temporal: true })).rejects.toThrow(
        `Port ${port} (TEMPORAL_DEV_PORT) is taken by something other than the Temporal dev server of DATA_DIR ${dataDir}`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('npm start, with a DATA_DIR another start holds', () => {
  it('is refused while that start runs, and takes the DATA_DIR over once it is gone', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'claim-'));
    // A stand-in for a running `npm start`: a live process whose command line names the start script.
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'scripts/start.ts'], { stdio: 'ignore' });
    try {
      writeFileSync(path.join(dataDir, 'npm-start.pid'), `${other.pid}\n`);
      expect(() => claimDataDir(dataDir, 'scripts/start.ts')).toThrow(`npm start already runs with DATA_DIR ${dataDir} (pid ${other.pid})`);
      other.kill('SIGKILL');
      await new Promise((resolve) => other.once('exit', resolve));
      const release = claimDataDir(dataDir, 'scripts/start.ts');
      expect(readFileSync(path.join(dataDir, 'npm-start.pid'), 'utf8')).toBe(`${process.pid}\n`);
      release();
      expect(existsSync(path.join(dataDir, 'npm-start.pid'))).toBe(false);
    } finally {
      other.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
