import type { SqlExecutor } from '../sql-executor.ts';
import type { ApiPrincipal } from '../../domain/auth/api-key.ts';
import { admissionOf, windowParams, type Admission, type AdmissionColumns, type AdmissionWindow } from './rate-limits.ts';

interface ApiKeyRow {
  id: number;
  tenant_id: number;
  client_id: string;
  rate_limit_per_minute: number | null;
}

/**
 * The tenant behind an unrevoked API key, looked up by the key's hash (keys are never stored), and the request
 * counted against the key's rate limit (`api-key:<id>`, the tenant's limit or `defaultLimit`) in the same call
 * (`routines.admit_api_key`). Undefined for an unknown or revoked key, which is counted nowhere.
 */
export async function findPrincipalAndAdmit(
  em: SqlExecutor,
  input: { keyHash: string; defaultLimit: number; window: AdmissionWindow },
): Promise<Admission<ApiPrincipal> | undefined> {
  const [found] = await em.execute<(ApiKeyRow & AdmissionColumns)[]>(
    `select * from routines.admit_api_key(?, ?, ?, ?, ?)`,
    [input.keyHash, input.defaultLimit, ...windowParams(input.window)],
  );
  if (!found) return undefined;
  const admission = admissionOf<ApiKeyRow>(found);
  const { row } = admission;
  return { ...admission, row: { apiKeyId: row.id, tenantId: row.tenant_id, clientId: row.client_id, rateLimitPerMinute: row.rate_limit_per_minute } };
}
