import { rmSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../platform/config.ts';
import { ensureLocalServers, portIsOpen } from '../scripts/local-stack/local-runtime.ts';

/** Where a bench keeps its own servers: a folder under DATA_DIR and ports apart from `npm start`'s and the tests'. */
export interface BenchServerPlace {
  readonly folder: string;
  readonly postgresPort: number;
  /** Unset: the bench needs no Temporal. */
  readonly temporal?: { readonly port: number; readonly uiPort: number };
}

/**
 * Starts (or finds running) the bench's embedded PostgreSQL and Temporal dev server, or uses DATABASE_URL /
 * TEMPORAL_ADDRESS when set; environment variables of the same names override each port.
 */
export async function startBenchServers(place: BenchServerPlace): Promise<{ config: Config; servers: Awaited<ReturnType<typeof ensureLocalServers>> }> {
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
  return { config, servers };
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
