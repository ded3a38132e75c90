import net from 'node:net';
import path from 'node:path';
import type { Config } from '../../platform/config.ts';
import { openOrm } from '../../data/orm.ts';
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

/** How long a PostgreSQL found on the embedded port has to answer before it is taken for something else. */
const REUSE_CHECK_TIMEOUT_MS = 5_000;

/**
 * Something listens on the embedded PostgreSQL's port: the one an earlier `npm start` left running is reused, anything
 * else (another program, another PostgreSQL) is named rather than waited on.
 */
async function requireOwnPostgres(url: string, port: number): Promise<void> {
  const orm = await openOrm({ databaseUrl: url, poolSize: 1, connectTimeoutMs: REUSE_CHECK_TIMEOUT_MS });
  const reason = await orm
    .connect()
    .then(() => orm.checkConnection())
    .then((check) => (check.ok ? undefined : check.reason), (error: Error) => error.message)
    .finally(() => orm.close(true));
  if (reason !== undefined) {
    throw new Error(
      `Port ${port} (EMBEDDED_POSTGRES_PORT) is taken by something that is not this project's PostgreSQL (${reason}). Stop it, or set EMBEDDED_POSTGRES_PORT to a free port, or DATABASE_URL to a PostgreSQL of your own`,
    );
  }
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
    if (await portIsOpen(config.embeddedPostgresPort)) {
      await requireOwnPostgres(embeddedUrl, config.embeddedPostgresPort);
      databaseUrl = embeddedUrl;
    } else {
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
