import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Disables (with a reason) or enables a tenant's endpoint in one conditional statement: true when this call changed
 * it, false when it already was so, undefined when the tenant has no such endpoint.
 */
export async function setEndpointEnabled(em: EntityManager, change: { tenantId: number; endpointId: string; enabled: boolean; reason?: string }): Promise<boolean | undefined> {
  const changed = change.enabled
    ? await em.execute<{ id: string }[]>(`update webhook_endpoints set disabled_at = null, disabled_reason = null, updated_at = now() where id = ? and tenant_id = ? and disabled_at is not null returning id`, [
        change.endpointId,
        change.tenantId,
      ])
    : await em.execute<{ id: string }[]>(`update webhook_endpoints set disabled_at = now(), disabled_reason = ?, updated_at = now() where id = ? and tenant_id = ? and disabled_at is null returning id`, [
        change.reason ?? 'Disabled on request',
        change.endpointId,
        change.tenantId,
      ]);
  if (changed.length > 0) return true;
  const [found] = await em.execute<{ id: string }[]>(`select id from webhook_endpoints where id = ? and tenant_id = ?`, [change.endpointId, change.tenantId]);
  return found ? false : undefined;
}
