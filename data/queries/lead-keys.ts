import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlExecutor } from '../sql-executor.ts';
import type { LeadEnvironment, LeadKeyKind } from '../../domain/leads/lead-keys.ts';
import { admissionOf, windowParams, type Admission, type AdmissionColumns, type AdmissionWindow } from './rate-limits.ts';

/** Who a lead key speaks for: one application of one tenant, in one environment. */
export interface LeadKeyPrincipal {
  readonly keySetId: number;
  readonly kind: LeadKeyKind;
  readonly tenantId: number;
  readonly applicationId: number;
  readonly environment: LeadEnvironment;
  readonly allowedOrigins: readonly string[];
  readonly rateLimitPerMinute: number | null;
}

interface LeadKeyRow {
  id: number;
  tenant_id: number;
  application_id: number;
  environment: LeadEnvironment;
  lead_allowed_origins: string[];
  rate_limit_per_minute: number | null;
}

const hashColumn = (kind: LeadKeyKind) => (kind === 'publishable' ? 'publishable_key_hash' : 'secret_key_hash');

/** The key set holding a hash as its `kind` key, its application and tenant; the hash is the parameter. */
const keySetOf = (kind: LeadKeyKind) =>
  `select k.id, k.tenant_id, k.application_id, k.environment, a.lead_allowed_origins, t.rate_limit_per_minute
     from lead_key_sets k
     join applications a on a.id = k.application_id
     join tenants t on t.id = k.tenant_id
    where k.${hashColumn(kind)} = ?`;

const principalOf = (kind: LeadKeyKind, row: LeadKeyRow): LeadKeyPrincipal => ({
  keySetId: row.id,
  kind,
  tenantId: row.tenant_id,
  applicationId: row.application_id,
  environment: row.environment,
  allowedOrigins: row.lead_allowed_origins,
  rateLimitPerMinute: row.rate_limit_per_minute,
});

/** The key set holding this hash as its publishable or secret key (keys are never stored). */
export async function findLeadKeyByHash(em: SqlExecutor, kind: LeadKeyKind, keyHash: string): Promise<LeadKeyPrincipal | undefined> {
  const [row] = await em.execute<LeadKeyRow[]>(keySetOf(kind), [keyHash]);
  return row && principalOf(kind, row);
}

/**
 * The key set holding this hash, with the request counted against its rate limit in the same call
 * (`routines.admit_lead_key`): a secret key per key set (`lead-sk:<id>`), a publishable key per key set and caller
 * address (`lead-pk:<id>:<address>`, since every browser shares it), and only when the browser's `origin` is exactly
 * one of the application's allowed origins (`counted` false otherwise: the caller answers 403 and nothing is
 * counted). Undefined for an unknown key.
 */
export async function findLeadKeyAndAdmit(
  em: SqlExecutor,
  input: { kind: LeadKeyKind; keyHash: string; clientAddress: string; origin: string | undefined; defaultLimit: number; window: AdmissionWindow },
): Promise<(Admission<LeadKeyPrincipal> & { counted: boolean }) | undefined> {
  const [found] = await em.execute<(LeadKeyRow & AdmissionColumns & { counted: boolean })[]>(
    `select * from routines.admit_lead_key(?, ?, ?, ?, ?, ?, ?, ?)`,
    [input.kind, input.keyHash, input.clientAddress, input.origin ?? null, input.defaultLimit, ...windowParams(input.window)],
  );
  if (!found) return undefined;
  const { counted, ...columns } = found;
  const admission = admissionOf<LeadKeyRow>(columns);
  return { ...admission, counted, row: principalOf(input.kind, admission.row) };
}

/**
 * Replaces (or creates) an application's key pair for one environment in one statement: from its commit on,
 * the old publishable and secret keys both match nothing. Undefined when the tenant has no such application.
 */
export async function replaceLeadKeyPair(
  em: EntityManager,
  input: { tenantId: number; applicationSlug: string; environment: LeadEnvironment; publishableKeyHash: string; secretKeyHash: string },
): Promise<{ applicationId: number } | undefined> {
  const [row] = await em.execute<{ application_id: number }[]>(
    `insert into lead_key_sets (tenant_id, application_id, environment, publishable_key_hash, secret_key_hash, created_at)
     select a.tenant_id, a.id, ?, ?, ?, now() from applications a where a.tenant_id = ? and a.slug = ?
     on conflict (application_id, environment) do update
        set publishable_key_hash = excluded.publishable_key_hash, secret_key_hash = excluded.secret_key_hash, created_at = excluded.created_at
     returning application_id`,
    [input.environment, input.publishableKeyHash, input.secretKeyHash, input.tenantId, input.applicationSlug],
  );
  return row && { applicationId: row.application_id };
}

export interface LeadApplication {
  readonly id: number;
  readonly slug: string;
  readonly name: string;
  readonly allowedOrigins: string[];
}

/** Sets the origins an application's pages may write leads from; undefined when the tenant has no such application. */
export async function setLeadAllowedOrigins(em: EntityManager, input: { tenantId: number; applicationSlug: string; origins: readonly string[] }): Promise<LeadApplication | undefined> {
  // One JSON parameter: the driver would spread an array parameter into a list.
  const [row] = await em.execute<{ id: number; slug: string; name: string; lead_allowed_origins: string[] }[]>(
    `update applications set lead_allowed_origins = array(select jsonb_array_elements_text(?::jsonb)), updated_at = now()
      where tenant_id = ? and slug = ?
      returning id, slug, name, lead_allowed_origins`,
    [JSON.stringify(input.origins), input.tenantId, input.applicationSlug],
  );
  return row && { id: row.id, slug: row.slug, name: row.name, allowedOrigins: row.lead_allowed_origins };
}

/**
 * Whether any application allows this origin: a CORS preflight carries no key to say which one it is for. A count,
 * not `exists`: with `exists` the planner bets on meeting a match early and scans the table, which is the worst
 * case for the origins that matter here (unknown ones, from anybody's browser); counting reads the GIN index.
 */
export async function isLeadOriginAllowed(em: EntityManager, origin: string): Promise<boolean> {
  const [row] = await em.execute<{ allowed: boolean }[]>(
    `select count(*) > 0 as allowed from applications where lead_allowed_origins @> array[?]::text[]`,
    [origin],
  );
  return row?.allowed === true;
}
