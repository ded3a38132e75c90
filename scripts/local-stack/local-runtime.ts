import net from 'node:net';
import path from 'node:path';
import type { Config } from '../../platform/config.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { startTemporalDevServer } from './temporal-dev-server.ts';
import { ensureTemporalCli } from './temporal-cli.ts';
import { keepRunning, type RunningServer } from './keep-running.ts';
import { forgetTemporalServer, postgresPortOf, recordTemporalServer, runningPostgres, runningTemporal, stopLeftover } from './leftovers.ts';

// scripts/provision.ts imports it from here.

/** What `npm start` runs itself when no address is configured, and how to stop it. */
export interface LocalServers {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl?: string;
  stop(): Promise<void>;
}

export function portIsOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Uses DATABASE_URL / TEMPORAL_ADDRESS when set; otherwise runs embedded PostgreSQL and the Temporal
 * dev server with their data under DATA_DIR, or uses the ones of this DATA_DIR already running (`leftovers.ts`).
 */
export async function ensureLocalServers(
  config: Config,
  options: {
    temporal: boolean;
    /** Progress a person should see (a first-time Temporal CLI install). */
    say?: (line: string) => void;
    /** The Temporal dev server's own output. */
    temporalLog?: (line: string) => void;
    /**
     * Servers of this DATA_DIR left running by an earlier start killed outright are stopped with these (`npm start`,
     * which holds DATA_DIR); otherwise they are used and left running (`npm run provision` beside a running start).
     */
    adoptLeftovers?: boolean;
    /**
     * For a start that runs for long (`npm start`): the servers started here are watched; the Temporal dev server is
     * started again when its process ends on its own, and PostgreSQL's end (a server killed outright leaves backends
     * that a new one cannot start beside) or a Temporal dev server that keeps ending is `giveUp`.
     */
    watch?: { report(line: string): void; giveUp(reason: string): void };
  },
): Promise<LocalServers> {
  const watched = <T extends RunningServer>(server: T, name: string, restart?: () => Promise<T>, restarted?: (next: T) => void) =>
    options.watch ? keepRunning(server, { name, restart, restarted, maxRestarts: 3, windowMs: 60_000, ...options.watch }) : server;
  const stops: (() => Promise<void>)[] = [];
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const port = config.embeddedPostgresPort;
    if (await portIsOpen(port)) {
      // Only this DATA_DIR's own: another's database would be read with this DATA_DIR's encryption key.
      const leftover = runningPostgres(path.resolve(config.dataDir, 'postgres'), port);
      if (leftover === undefined) {
        throw new Error(
          `Port ${port} (EMBEDDED_POSTGRES_PORT) is taken by something other than the PostgreSQL of DATA_DIR ${config.dataDir} (another program, or an npm start with another DATA_DIR). Stop it, or set EMBEDDED_POSTGRES_PORT to a free port, or DATABASE_URL to a PostgreSQL of your own`,
        );
      }
      if (options.adoptLeftovers) stops.push(() => stopLeftover(leftover, 'SIGINT'));
      databaseUrl = `postgres://postgres:postgres@127.0.0.1:${port}/payments`;
    } else {
      // A second server on the same data would not start (and say nothing of why): the running one is named instead.
      const runningOn = postgresPortOf(path.resolve(config.dataDir, 'postgres'));
      if (runningOn !== undefined && runningOn !== port) {
        throw new Error(
          `The PostgreSQL of DATA_DIR ${config.dataDir} runs on port ${runningOn}, not on EMBEDDED_POSTGRES_PORT (${port}): set EMBEDDED_POSTGRES_PORT=${runningOn} to use it`,
        );
      }
      if (runningOn !== undefined) {
        throw new Error(`The PostgreSQL of DATA_DIR ${config.dataDir} runs but does not answer on 127.0.0.1:${port} yet (starting, or stopping): try again in a moment`);
      }
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort });
      const running = watched(pg, 'embedded PostgreSQL');
      stops.push(() => running.stop());
      databaseUrl = pg.url;
    }
  }
  let temporalAddress = config.temporalAddress ?? '';
  let temporalUiUrl = config.temporalUiUrl;
  if (options.temporal && !config.temporalAddress) {
    temporalAddress = `127.0.0.1:${config.temporalDevPort}`;
    temporalUiUrl = `http://127.0.0.1:${config.temporalUiPort}`;
    const temporalDir = path.resolve(config.dataDir, 'temporal');
    try {
      if (await portIsOpen(config.temporalDevPort)) {
        const leftover = runningTemporal(temporalDir);
        if (leftover === undefined) {
          throw new Error(
            `Port ${config.temporalDevPort} (TEMPORAL_DEV_PORT) is taken by something other than the Temporal dev server of DATA_DIR ${config.dataDir} (another program, or an npm start with another DATA_DIR). Stop it, or set TEMPORAL_DEV_PORT to a free port, or TEMPORAL_ADDRESS to a Temporal server of your own`,
          );
        }
        if (options.adoptLeftovers) {
          stops.unshift(async () => {
            await stopLeftover(leftover, 'SIGTERM');
            forgetTemporalServer(temporalDir);
          });
        }
      } else {
        const startTemporal = () =>
          startTemporalDevServer({
            cliPath: ensureTemporalCli({ explicitPath: config.temporalCliPath, log: options.say }),
            dataDir: temporalDir,
            port: config.temporalDevPort,
            uiPort: config.temporalUiPort,
            namespace: config.temporalNamespace,
            log: options.temporalLog,
          });
        const record = (server: { pid: number }) => recordTemporalServer(temporalDir, server.pid);
        const temporal = await startTemporal();
        record(temporal);
        const running = watched(temporal, 'Temporal dev server', startTemporal, record);
        stops.unshift(async () => {
          await running.stop();
          forgetTemporalServer(temporalDir);
        });
      }
    } catch (error) {
      for (const stop of stops) await stop(); // the PostgreSQL started above
      throw error;
    }
  }
  return {
    databaseUrl,
    temporalAddress,
    temporalUiUrl,
    async stop() {
      for (const stop of stops) await stop();
    },
  };
}
