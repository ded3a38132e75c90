import { MikroORM, defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENTITIES } from '../schema/entities/index.ts';

const migrationsPath = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export function ormConfig(options: { databaseUrl: string; poolSize?: number; debug?: boolean }) {
  return defineConfig({
    clientUrl: options.databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    pool: { min: 0, max: options.poolSize ?? 10 },
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

/** Applies every pending migration; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}

export type { MikroORM };
