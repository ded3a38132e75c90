import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditEntry, type Tenant } from '../../schema/entities/index.ts';

/** Records one change of the tenant's records in the audit log (persisted with the next flush). */
export type Audit = (action: string, entityType: string, entityId: string | number, changes?: Record<string, unknown>) => void;

/** What each provisioning step works within: the transaction, the tenant, and its audit log. */
export interface TenantScope {
  readonly em: EntityManager;
  readonly tenant: Tenant;
  readonly audit: Audit;
  /**
   * The application a product or lead key pair naming none belongs to: the fixture's first application when it
   * declares any (as the fixture reads), else none here and the tenant's oldest (`applicationOf`).
   */
  readonly defaultApplication?: string;
}

export function auditFor(em: EntityManager, tenant: Tenant, actor: string): Audit {
  return (action, entityType, entityId, changes) =>
    em.persist(em.create(AuditEntry, { tenant, actor, action, entityType, entityId: String(entityId), changes: changes ?? null }));
}
