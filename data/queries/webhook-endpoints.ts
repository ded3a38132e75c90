import type { EntityManager } from '@mikro-orm/postgresql';

/** What a change of an endpoint's state did. */
export type EndpointStateChange = 'changed' | 'unchanged' | 'held_by_operator' | 'not_found';

/**
 * Disables (with a reason) or enables a tenant's endpoint in one conditional statement. The operator's disable holds
 * the endpoint (`disabled_by_operator`), also one the tenant had disabled already; the tenant's enable leaves a held
 * endpoint as it is (`held_by_operator`), the operator's enables any. A blank `reason` keeps the one a disabled
 * endpoint has.
 */
export async function setEndpointEnabled(
  em: EntityManager,
  change: { tenantId: number; endpointId: string; enabled: boolean; reason?: string; byOperator: boolean },
): Promise<EndpointStateChange> {
  const where = 'where id = ? and tenant_id = ?';
  const changed = change.enabled
    ? await em.execute<{ id: string }[]>(
        `update webhook_endpoints set disabled_at = null, disabled_reason = null, disabled_by_operator = false, updated_at = now()
          ${where} and disabled_at is not null and (? or not disabled_by_operator) returning id`,
        [change.endpointId, change.tenantId, change.byOperator],
      )
    : change.byOperator
      ? await em.execute<{ id: string }[]>(
          `update webhook_endpoints set disabled_at = coalesce(disabled_at, now()),
              disabled_reason = coalesce(?, case when disabled_at is null then 'Disabled on request' else disabled_reason end),
              disabled_by_operator = true, updated_at = now()
            ${where} and not disabled_by_operator returning id`,
          [change.reason ?? null, change.endpointId, change.tenantId],
        )
      : await em.execute<{ id: string }[]>(`update webhook_endpoints set disabled_at = now(), disabled_reason = ?, updated_at = now() ${where} and disabled_at is null returning id`, [
          change.reason ?? 'Disabled on request',
          change.endpointId,
          change.tenantId,
        ]);
  if (changed.length > 0) return 'changed';
  const [found] = await em.execute<{ held: boolean }[]>(`select disabled_by_operator as held from webhook_endpoints ${where}`, [change.endpointId, change.tenantId]);
  if (!found) return 'not_found';
  return change.enabled && found.held && !change.byOperator ? 'held_by_operator' : 'unchanged';
}
