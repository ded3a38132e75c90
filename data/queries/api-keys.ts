import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiPrincipal } from '../../domain/auth/api-key.ts';
import { admitCaller, type Admission, type AdmissionWindow } from './rate-limits.ts';

interface ApiKeyRow {
  id: number;
  tenant_id: number;
  client_id: string;
  rate_limit_per_minute: number | null;
}

/** A key's requests are counted under `api-key:<id>`, by REST and GraphQL alike. */
const SUBJECT_PREFIX = 'api-key:';

/**
 * The tenant behind an unrevoked API key, looked up by the key's hash (keys are never stored), and the request
 * counted against the key's rate limit (`api-key:<id>`, the tenant's limit or `defaultLimit`) in the same statement.
 * Undefined for an unknown or revoked key, which is counted nowhere.
 */
export async function findPrincipalAndAdmit(
  em: EntityManager,
  input: { keyHash: string; defaultLimit: number; window: AdmissionWindow },
): Promise<Admission<ApiPrincipal> | undefined> {
  const admission = await admitCaller<ApiKeyRow>(
    em,
    {
      sql: `select k.id, k.tenant_id, t.client_id, t.rate_limit_per_minute,
                   cast(? as text) || k.id as subject, coalesce(t.rate_limit_per_minute, ?) as rate_limit, true as counted
              from api_keys k join tenants t on t.id = k.tenant_id
             where k.key_hash = ? and k.revoked_at is null`,
      params: [SUBJECT_PREFIX, input.defaultLimit, input.keyHash],
    },
    input.window,
  );
  if (!admission) return undefined;
  const { row } = admission;
  return { ...admission, row: { apiKeyId: row.id, tenantId: row.tenant_id, clientId: row.client_id, rateLimitPerMinute: row.rate_limit_per_minute } };
}
