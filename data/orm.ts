import { MikroORM, defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ENTITIES } from '../schema/entities/index.ts';

const migrationsPath = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** How long opening a connection to PostgreSQL may take before the request fails as the database away. */
export const DATABASE_CONNECT_TIMEOUT_MS = 30_000;

/** `pg`'s client class, as far as this module uses it (the package ships no types). */
type PgClientClass = new (config?: Record<string, unknown>) => object;
const { Client: PgClient } = createRequire(import.meta.url)('pg') as { Client: PgClientClass };

/**
 * A `pg` client that gives up opening its connection after `timeoutMs`. Given to the pool as its client class rather
 * than as the pool's own `connectionTimeoutMillis`, which would also limit the wait for a free connection of a full
 * pool: a burst queued behind a busy pool waits as before and is never told the database is away.
 */
function clientConnectingWithin(timeoutMs: number): PgClientClass {
  return class ConnectingWithin extends PgClient {
    constructor(config: Record<string, unknown> = {}) {
      // A copy with every property: the pool keeps the password non-enumerable (out of logs), which a spread drops.
      const own = Object.defineProperties({}, Object.getOwnPropertyDescriptors(config)) as Record<string, unknown>;
      own.connectionTimeoutMillis = timeoutMs;
      super(own);
    }
  };
}

interface OrmOptions {
  readonly databaseUrl: string;
  readonly poolSize?: number;
  /** DATABASE_CONNECT_TIMEOUT_MS unless given (tests of a silent database). */
  readonly connectTimeoutMs?: number;
}

export function ormConfig(options: OrmOptions & { debug?: boolean; asynchronousCommit?: boolean }) {
  return defineConfig({
    clientUrl: options.databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    pool: { min: 0, max: options.poolSize ?? 10 },
    driverOptions: {
      // A database that takes no connection (its host dropping packets, a port held by something silent) fails the
      // request after this long, answered 503, instead of after the system's TCP timeouts (minutes).
      Client: clientConnectingWithin(options.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS),
      // Passed to every connection of the pool as a startup parameter (the `pg` driver's `options`).
      ...(options.asynchronousCommit ? { options: '-c synchronous_commit=off' } : {}),
    },
    debug: options.debug ?? false,
    // Entities are plain definitions; no metadata discovery from TypeScript sources is needed.
    migrations: {
      path: migrationsPath,
      pathTs: migrationsPath,
      glob: '!(*.d).ts',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      emit: 'ts',
      silent: true,
    },
  });
}

/** Opens the ORM (it connects lazily; `checkConnection` tells whether PostgreSQL answers). */
export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  return MikroORM.init(ormConfig(options));
}

/**
 * Opens the pool and proves PostgreSQL answers (a refused port, an unknown host, a wrong password or database),
 * throwing the driver's reason: the pool connects lazily, and the process would otherwise fail at its first query.
 */
export async function openConnectedOrm(options: OrmOptions): Promise<MikroORM> {
  const orm = await openOrm(options);
  try {
    await orm.em.getConnection().execute('select 1');
    return orm;
  } catch (error) {
    await orm.close(true);
    throw error;
  }
}

/**
 * A second, small pool for rate-limit counters: its sessions commit without waiting for the WAL flush
 * (`synchronous_commit = off`). Every request of a key updates the same window row, and an update holds that row
 * until its commit returns; a synchronous commit would make the key's requests pass one fsync at a time. A crash
 * may lose the last fraction of a second of counts, which only lets a few more requests through; nothing else may
 * be written through this pool (money, leads and keys stay on the synchronous one).
 */
export async function openCounterOrm(options: OrmOptions): Promise<MikroORM> {
  return MikroORM.init(ormConfig({ ...options, asynchronousCommit: true }));
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}

export type { MikroORM };
