import type { EntityManager } from '@mikro-orm/postgresql';

/** Resolves when PostgreSQL answers a statement; rejects with the driver's error otherwise. */
export async function pingDatabase(em: EntityManager): Promise<void> {
  await em.execute('select 1');
}
