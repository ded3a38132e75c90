import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The local stack's servers (embedded PostgreSQL, the Temporal dev server) outlive an `npm start` killed outright: they
 * are not its entry points, and nothing tells them their parent went. A later start with the same DATA_DIR finds
 * them by the pid files under DATA_DIR, takes them over (stops them when it stops) and refuses anything else
 * listening on their ports, rather than using another DATA_DIR's database with this one's encryption key.
 */

/** Whether a process runs, and its command line says it is what `marker` names (a path under DATA_DIR). */
export function runsAs(pid: number, marker: string): boolean {
  if (!isRunning(pid)) return false;
  const commandLine = commandLineOf(pid);
  // Without /proc (macOS), a live pid written by this stack is taken at its word.
  return commandLine === undefined || commandLine.includes(marker);
}

/** Running: one that exited but was not reaped yet (a zombie, where PID 1 reaps nothing) has stopped. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true; // no /proc: alive as far as signals tell
  }
}

function commandLineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return undefined;
  }
}

function pidIn(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]!.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * The postmaster running on `databaseDir` and `port`, from the `postmaster.pid` PostgreSQL keeps in its data
 * directory (first line its pid, fourth its port).
 */
export function runningPostgres(databaseDir: string, port: number): number | undefined {
  const file = path.join(databaseDir, 'postmaster.pid');
  const pid = pidIn(file);
  if (pid === undefined) return undefined;
  const lines = readFileSync(file, 'utf8').split('\n');
  return Number(lines[3]) === port && runsAs(pid, databaseDir) ? pid : undefined;
}

/** The port of the postmaster running on `databaseDir`, whatever port that is, or undefined when none runs. */
export function postgresPortOf(databaseDir: string): number | undefined {
  const file = path.join(databaseDir, 'postmaster.pid');
  const pid = pidIn(file);
  if (pid === undefined || !runsAs(pid, databaseDir)) return undefined;
  const port = Number(readFileSync(file, 'utf8').split('\n')[3]);
  return Number.isSafeInteger(port) && port > 0 ? port : undefined;
}

const TEMPORAL_PID_FILE = 'server.pid';

/** Records the Temporal dev server this stack started, so a later start can find it. */
export function recordTemporalServer(temporalDir: string, pid: number): void {
  mkdirSync(temporalDir, { recursive: true });
  writeFileSync(path.join(temporalDir, TEMPORAL_PID_FILE), `${pid}\n`);
}

export function forgetTemporalServer(temporalDir: string): void {
  rmSync(path.join(temporalDir, TEMPORAL_PID_FILE), { force: true });
}

/** The Temporal dev server running on `temporalDir`'s database, started by an earlier start. */
export function runningTemporal(temporalDir: string): number | undefined {
  const pid = pidIn(path.join(temporalDir, TEMPORAL_PID_FILE));
  return pid !== undefined && runsAs(pid, temporalDir) ? pid : undefined;
}

/** Stops a server taken over: `signal` (PostgreSQL's SIGINT is its fast shutdown), then SIGKILL after `graceMs`. */
export async function stopLeftover(pid: number, signal: NodeJS.Signals, graceMs = 30_000): Promise<void> {
  const gone = () => !isRunning(pid);
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (!gone()) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const RUN_FILE = 'npm-start.pid';

/**
 * Claims DATA_DIR for this `npm start`: refused while another one runs with it (it owns the servers there); a file
 * left by a start killed outright is taken over. Returns the release, called when this start ends.
 */
export function claimDataDir(dataDir: string, startScript: string): () => void {
  const file = path.join(dataDir, RUN_FILE);
  const other = pidIn(file);
  if (other !== undefined && other !== process.pid && runsAs(other, startScript)) {
    throw new Error(`npm start already runs with DATA_DIR ${dataDir} (pid ${other}): stop it first, or give this one another DATA_DIR`);
  }
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${process.pid}\n`);
  return () => {
    if (pidIn(file) === process.pid) rmSync(file, { force: true });
  };
}
