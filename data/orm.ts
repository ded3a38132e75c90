import { MikroORM, defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENTITIES } from '../schema/entities/index.ts';

const migrationsPath = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export function ormConfig(options: { databaseUrl: string; poolSize?: number; debug?: boolean; asynchronousCommit?: boolean }) {
  return defineConfig({
    clientUrl: options.databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    pool: { min: 0, max: options.poolSize ?? 10 },
    // Passed to every connection of the pool as a startup parameter (the `pg` driver's `options`).
    ...(options.asynchronousCommit ? { driverOptions: { options: '-c synchronous_commit=off' } } : {}),
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
export async function openOrm(options: { databaseUrl: string; poolSize?: number }): Promise<MikroORM> {
  return MikroORM.init(ormConfig(options));
}

/**
 * A second, small pool for rate-limit counters: its sessions commit without waiting for the WAL flush
 * (`synchronous_commit = off`). Every request of a key updates the same window row, and an update holds that row
 * until its commit returns; a synchronous commit would make the key's requests pass one fsync at a time. A crash
 * may lose the last fraction of a second of counts, which only lets a few more requests through; nothing else may
 * be written through this pool (money, leads and keys stay on the synchronous one).
 */
export async function openCounterOrm(options: { databaseUrl: string; poolSize?: number }): Promise<MikroORM> {
  return MikroORM.init(ormConfig({ ...options, asynchronousCommit: true }));
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}

export type { MikroORM };
