import type { StdioOptions } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

export interface LogFiles {
  /** The folder, relative to the working directory when inside it (as printed). */
  readonly dir: string;
  readonly names: readonly string[];
  /** stdio for a child process whose stdout and stderr go to `<name>.log`. */
  stdio(name: string): StdioOptions;
  write(name: string, text: string): void;
  close(): void;
}

/**
 * One log file per local process, so the terminal keeps only what a person needs. Each start begins
 * new files; the previous run's are kept as `<name>.previous.log` (a crash is often looked at after a restart).
 */
export function openLogFiles(dir: string, names: readonly string[]): LogFiles {
  mkdirSync(dir, { recursive: true });
  const fds = new Map<string, number>();
  for (const name of names) {
    const file = path.join(dir, `${name}.log`);
    if (existsSync(file)) renameSync(file, path.join(dir, `${name}.previous.log`));
    fds.set(name, openSync(file, 'a', 0o600));
  }
  const fd = (name: string) => {
    const found = fds.get(name);
    if (found === undefined) throw new Error(`no log file named ${name}`);
    return found;
  };
  const relative = path.relative(process.cwd(), dir);
  return {
    dir: relative && !relative.startsWith('..') ? relative : dir,
    names,
    stdio: (name) => ['ignore', fd(name), fd(name)],
    write: (name, text) => void writeSync(fd(name), text.endsWith('\n') ? text : `${text}\n`),
    close() {
      for (const descriptor of fds.values()) closeSync(descriptor);
      fds.clear();
    },
  };
}
