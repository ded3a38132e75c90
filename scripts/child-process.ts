import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Runs a TypeScript entry point of the repo with the current Node (24) through tsx. */
export function spawnEntry(entry: string, env: NodeJS.ProcessEnv, stdio: 'inherit' | 'pipe' | 'ignore' = 'inherit'): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, entry)], { cwd: REPO_ROOT, env, stdio });
}
