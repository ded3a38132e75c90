import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiPrincipal } from '../../domain/auth/api-key.ts';

interface ApiKeyRow {
  id: number;
  tenant_id: number;
  client_id: string;
  rate_limit_per_minute: number | null;
}

/** The tenant behind an unrevoked API key, looked up by the key's hash (keys are never stored). */
export async function findPrincipalByKeyHash(em: EntityManager, keyHash: string): Promise<ApiPrincipal | undefined> {
  const [row] = await em.execute<ApiKeyRow[]>(
    `select k.id, k.tenant_id, t.client_id, t.rate_limit_per_minute
       from api_keys k join tenants t on t.id = k.tenant_id
      where k.key_hash = ? and k.revoked_at is null`,
    [keyHash],
  );
  return row && { apiKeyId: row.id, tenantId: row.tenant_id, clientId: row.client_id, rateLimitPerMinute: row.rate_limit_per_minute };
}
