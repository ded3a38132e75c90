import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../platform/config.ts';
import { stopChild } from '../scripts/child-process.ts';
import { ensureLocalServers, portIsOpen, type LocalServers } from '../scripts/local-stack/local-runtime.ts';

/** Where a bench keeps its own servers: a folder under DATA_DIR and ports apart from `npm start`'s and the tests'. */
export interface BenchServerPlace {
  readonly folder: string;
  readonly postgresPort: number;
  /** Unset: the bench needs no Temporal. */
  readonly temporal?: { readonly port: number; readonly uiPort: number };
}

/** A bench's servers, and the processes it runs against them (put them in `children` to have them stopped on failure). */
export interface BenchServers {
  readonly config: Config;
  readonly servers: LocalServers;
  readonly children: ChildProcess[];
}

/**
 * Starts (or finds running) the bench's embedded PostgreSQL and Temporal dev server, or uses DATABASE_URL /
 * TEMPORAL_ADDRESS when set; environment variables of the same names override each port. A bench that then fails or
 * is interrupted stops its children and the servers it started before it ends.
 */
export async function startBenchServers(place: BenchServerPlace): Promise<BenchServers> {
  const config = loadConfig({
    ...process.env,
    DATA_DIR: path.resolve(process.env.DATA_DIR ?? '.data', place.folder),
    EMBEDDED_POSTGRES_PORT: process.env.EMBEDDED_POSTGRES_PORT ?? String(place.postgresPort),
    ...(place.temporal
      ? { TEMPORAL_DEV_PORT: process.env.TEMPORAL_DEV_PORT ?? String(place.temporal.port), TEMPORAL_UI_PORT: process.env.TEMPORAL_UI_PORT ?? String(place.temporal.uiPort) }
      : {}),
  });
  // A Temporal dev server the bench starts begins empty: the histories of earlier runs (a gigabyte after ten runs of
  // `npm run bench`) slow its SQLite down by a sixth and more, so figures of runs on one machine would drift apart.
  if (place.temporal && !config.temporalAddress && !(await portIsOpen(config.temporalDevPort))) {
    for (const file of ['temporal.sqlite', 'temporal.sqlite-shm', 'temporal.sqlite-wal']) rmSync(path.join(config.dataDir, 'temporal', file), { force: true });
  }
  const servers = await ensureLocalServers(config, { temporal: place.temporal !== undefined });
  const children: ChildProcess[] = [];
  stopOnFailure(async () => {
    // Last started first: a gateway goes before the sandbox it calls, the servers after everything using them.
    for (const child of [...children].reverse()) await stopChild(child);
    await servers.stop();
  });
  return { config, servers, children };
}

/**
 * On an uncaught error (a rejected top-level await included) or Ctrl-C, runs `stop` and ends with status 1. Without
 * it, a bench that failed left its PostgreSQL and Temporal running, holding their ports and data folder: the next
 * run found them and measured against a server already loaded with the failed run's histories.
 */
function stopOnFailure(stop: () => Promise<void>): void {
  let stopping = false;
  const stopAndExit = async (reason: unknown) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}\nStopping the bench's servers…\n`);
    try {
      await stop();
    } finally {
      process.exit(1);
    }
  };
  process.on('uncaughtException', stopAndExit);
  process.on('unhandledRejection', stopAndExit);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAndExit(`Interrupted (${signal})`));
}

/** Waits up to a minute for a gateway's health or readiness URL to answer 2xx. */
export async function waitForHealth(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not yet listening
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`gateway did not become healthy at ${url}`);
}
