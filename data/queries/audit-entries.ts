import type { EntityManager } from '@mikro-orm/postgresql';

/** One change as the audit keeps it: who, what, on which record; secrets never (callers mask them first). */
export interface AuditRecord {
  readonly tenantId: number;
  readonly actor: string;
  readonly action: string;
  readonly entityType: string;
  readonly entityId: string;
  readonly changes: Record<string, unknown>;
}

/** Written in the caller's transaction, so a change cannot commit without its entry. */
export async function recordAuditEntry(em: EntityManager, entry: AuditRecord): Promise<void> {
  await em.execute(
    `insert into audit_entries (tenant_id, actor, action, entity_type, entity_id, changes, created_at) values (?, ?, ?, ?, ?, cast(? as jsonb), clock_timestamp())`,
    [entry.tenantId, entry.actor, entry.action, entry.entityType, entry.entityId, JSON.stringify(entry.changes)],
  );
}
