import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Holds the tenants a fixture names (by slug) until its transaction ends, taken in one order (sorted) so two fixtures
 * naming the same tenants cannot deadlock: a provisioning run reads each record and writes the difference, so runs of
 * one tenant at once wait for each other and each finds what the one before committed (its records, not a conflict).
 */
export async function lockTenantsToProvision(em: EntityManager, slugs: readonly string[]): Promise<void> {
  for (const slug of [...new Set(slugs)].sort()) {
    await em.execute(`select pg_advisory_xact_lock(hashtext('provisioning'), hashtext(?))`, [slug]);
  }
}
