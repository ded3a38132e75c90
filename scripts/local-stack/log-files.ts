import type { StdioOptions } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

export interface LogFiles {
  /** The folder, relative to the working directory when inside it (as printed). */
  readonly dir: string;
  readonly names: readonly string[];
  /** stdio for a child process whose stdout and stderr go to `<name>.log`. */
  stdio(name: string): StdioOptions;
  write(name: string, text: string): void;
  /** The log's size now: where what a process started now will write begins. */
  size(name: string): number;
  /** What a process said last, after byte `from`, of why it failed (its last error log line, or a thrown error's first line). */
  lastWords(name: string, from: number): string | undefined;
  close(): void;
}

/** How much of a log's end is read for its last words: a stack trace and a few lines around it. */
const TAIL_BYTES = 16 * 1024;
/** How many of a log's last lines may tell why the process exited (a stack trace and the lines around it). */
const LAST_LINES = 40;
/** pino's level of an error log line. */
const PINO_ERROR_LEVEL = 50;

/**
 * The last failure the end of a log tells: a JSON log line at error level or above (its message, and its error's when
 * that says more), else the first line of the last thrown error Node printed (`Error: …`), else nothing.
 */
export function lastWordsOf(text: string): string | undefined {
  // Only the end: an error logged long before (a request's) is not why the process exited.
  const lines = text.split('\n').map((line) => line.trim()).filter(Boolean).slice(-LAST_LINES);
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index]!;
    if (line.startsWith('{')) {
      const entry = parseLogLine(line);
      if (entry && typeof entry.level === 'number' && entry.level >= PINO_ERROR_LEVEL && typeof entry.msg === 'string') {
        const cause = entry.err?.message;
        return typeof cause === 'string' && cause && !entry.msg.includes(cause) ? `${entry.msg} (${cause})` : entry.msg;
      }
    } else if (/^([\w.]*Error|Error)\b.*:/.test(line)) {
      return line;
    }
  }
  return undefined;
}

function parseLogLine(line: string): { level?: unknown; msg?: unknown; err?: { message?: unknown } } | undefined {
  try {
    return JSON.parse(line) as { level?: unknown; msg?: unknown; err?: { message?: unknown } };
  } catch {
    return undefined;
  }
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
    fds.set(name, openSync(file, 'a+', 0o600));
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
    size: (name) => fstatSync(fd(name)).size,
    lastWords(name, from) {
      const descriptor = fd(name);
      const { size } = fstatSync(descriptor);
      const length = Math.max(0, Math.min(size - from, TAIL_BYTES));
      const tail = Buffer.alloc(length);
      readSync(descriptor, tail, 0, length, size - length);
      return lastWordsOf(tail.toString('utf8'));
    },
    close() {
      for (const descriptor of fds.values()) closeSync(descriptor);
      fds.clear();
    },
  };
}
