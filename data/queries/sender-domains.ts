import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Holds the tenant's sender domains until the transaction ends: a replace reads the current domains and writes the
 * difference, so replaces of one tenant at once (the operator's mutation, provisioning) wait for each other and each
 * leaves exactly the set it was given, never a union of two.
 */
export async function lockTenantSenderDomains(em: EntityManager, tenantId: number): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtext('sender-domains'), ?)`, [tenantId]);
}
