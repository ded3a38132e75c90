import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Runs a TypeScript entry point of the repo with the current Node (24) through tsx, with an IPC channel beside its
 * stdio: the entry points stop when it closes (`platform/stop-with-parent.ts`), so a parent killed outright leaves
 * no gateway, worker or sandbox behind.
 */
export function spawnEntry(entry: string, env: NodeJS.ProcessEnv, stdio: StdioOptions = 'inherit'): ChildProcess {
  if (Array.isArray(stdio) && stdio.length > 3) throw new Error('spawnEntry takes stdin, stdout and stderr only: the fourth is its IPC channel');
  const streams = [0, 1, 2].map((fd) => (typeof stdio === 'string' ? stdio : (stdio[fd] ?? 'pipe')));
  return spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, entry)], { cwd: REPO_ROOT, env, stdio: [...streams, 'ipc'] });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
