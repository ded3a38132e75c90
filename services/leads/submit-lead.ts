import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '../../data/sql-executor.ts';
import type { LeadKeyPrincipal } from '../../data/queries/lead-keys.ts';
import { upsertLead, type UpsertedLead } from '../../data/queries/leads.ts';
import { DomainError } from '../../domain/errors.ts';
import { parseLeadWrite } from '../../domain/leads/lead-input.ts';

/**
 * Creates or updates the lead of the body's `session_id` for the key's tenant, recording the key's application and
 * environment. A session whose lead was written with another application's or environment's key is not changed.
 */
export async function submitLead(em: SqlExecutor, principal: LeadKeyPrincipal, body: unknown): Promise<UpsertedLead> {
  const lead = parseLeadWrite(body);
  const upserted = await upsertLead(em, { id: randomUUID(), tenantId: principal.tenantId, applicationId: principal.applicationId, environment: principal.environment, lead });
  if (!upserted) throw new DomainError('forbidden', 'This session_id belongs to a lead of another application or environment', { field: 'session_id' });
  return upserted;
}
