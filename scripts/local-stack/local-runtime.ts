import net from 'node:net';
import path from 'node:path';
import type { Config } from '../../platform/config.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { startTemporalDevServer } from './temporal-dev-server.ts';
import { ensureTemporalCli } from './temporal-cli.ts';

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
 * dev server with their data under DATA_DIR, or reuses the ones a running `npm start` already has.
 */
export async function ensureLocalServers(
  config: Config,
  options: {
    temporal: boolean;
    /** Progress a person should see (a first-time Temporal CLI install). */
    say?: (line: string) => void;
    /** The Temporal dev server's own output. */
    temporalLog?: (line: string) => void;
  },
): Promise<LocalServers> {
  const stops: (() => Promise<void>)[] = [];
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const embeddedUrl = `postgres://postgres:postgres@127.0.0.1:${config.embeddedPostgresPort}/payments`;
    if (await portIsOpen(config.embeddedPostgresPort)) databaseUrl = embeddedUrl;
    else {
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort });
      stops.push(pg.stop);
      databaseUrl = pg.url;
    }
  }
  let temporalAddress = config.temporalAddress ?? '';
  let temporalUiUrl = config.temporalUiUrl;
  if (options.temporal && !config.temporalAddress) {
    temporalAddress = `127.0.0.1:${config.temporalDevPort}`;
    temporalUiUrl = `http://127.0.0.1:${config.temporalUiPort}`;
    if (!(await portIsOpen(config.temporalDevPort))) {
      try {
        const temporal = await startTemporalDevServer({
          cliPath: ensureTemporalCli({ explicitPath: config.temporalCliPath, log: options.say }),
          dataDir: path.resolve(config.dataDir, 'temporal'),
          port: config.temporalDevPort,
          uiPort: config.temporalUiPort,
          namespace: config.temporalNamespace,
          log: options.temporalLog,
        });
        stops.unshift(temporal.stop);
      } catch (error) {
        for (const stop of stops) await stop(); // the PostgreSQL started above
        throw error;
      }
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
