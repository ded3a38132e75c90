import type { EntityManager } from '@mikro-orm/postgresql';

/** What a change of an endpoint's state did. */
export type EndpointStateChange = 'changed' | 'unchanged' | 'held_by_operator' | 'not_found';

/** An endpoint's state as the change left it, or found it when it changed nothing. */
export interface EndpointState {
  readonly disabledAt: Date | null;
  readonly disabledReason: string | null;
  readonly disabledByOperator: boolean;
}

interface StateRow {
  disabled_at: string | null;
  disabled_reason: string | null;
  disabled_by_operator: boolean;
  changed: boolean;
}

/**
 * Disables (with a reason) or enables a tenant's endpoint in one conditional statement, under the row's lock (call it
 * in a transaction). The operator's disable holds
 * the endpoint (`disabled_by_operator`), also one the tenant had disabled already; the tenant's enable leaves a held
 * endpoint as it is (`held_by_operator`), the operator's enables any. A blank `reason` keeps the one a disabled
 * endpoint has. The state answered is the one this request left (or found): a request answered while others change
 * the endpoint at once shows its own change, not theirs.
 */
export async function setEndpointEnabled(
  em: EntityManager,
  change: { tenantId: number; endpointId: string; enabled: boolean; reason?: string; byOperator: boolean },
): Promise<{ outcome: EndpointStateChange; state?: EndpointState }> {
  const [update, params] = change.enabled
    ? [
        `update webhook_endpoints set disabled_at = null, disabled_reason = null, disabled_by_operator = false, updated_at = now()
          where id = ? and tenant_id = ? and disabled_at is not null and (? or not disabled_by_operator)`,
        [change.endpointId, change.tenantId, change.byOperator],
      ]
    : change.byOperator
      ? [
          `update webhook_endpoints set disabled_at = coalesce(disabled_at, now()),
              disabled_reason = coalesce(?, case when disabled_at is null then 'Disabled on request' else disabled_reason end),
              disabled_by_operator = true, updated_at = now()
            where id = ? and tenant_id = ? and not disabled_by_operator`,
          [change.reason ?? null, change.endpointId, change.tenantId],
        ]
      : [
          `update webhook_endpoints set disabled_at = now(), disabled_reason = ?, updated_at = now() where id = ? and tenant_id = ? and disabled_at is null`,
          [change.reason ?? 'Disabled on request', change.endpointId, change.tenantId],
        ];
  // The row is locked first (the caller's transaction holds it to its end): requests at once change it one after
  // another, and one that changes nothing reads the state that made it so, not one a later request set.
  const where = 'where id = ? and tenant_id = ?';
  const locked = await em.execute<{ id: string }[]>(`select id from webhook_endpoints ${where} for update`, [change.endpointId, change.tenantId]);
  if (locked.length === 0) return { outcome: 'not_found' };
  const columns = 'disabled_at, disabled_reason, disabled_by_operator';
  const [updated] = await em.execute<StateRow[]>(`${update} returning ${columns}, true as changed`, params);
  const [row] = updated ? [updated] : await em.execute<StateRow[]>(`select ${columns}, false as changed from webhook_endpoints ${where}`, [change.endpointId, change.tenantId]);
  if (!row) return { outcome: 'not_found' };
  // Raw rows carry timestamps as PostgreSQL's text.
  const state: EndpointState = { disabledAt: row.disabled_at === null ? null : new Date(row.disabled_at), disabledReason: row.disabled_reason, disabledByOperator: row.disabled_by_operator };
  if (row.changed) return { outcome: 'changed', state };
  return { outcome: change.enabled && row.disabled_by_operator && !change.byOperator ? 'held_by_operator' : 'unchanged', state };
}
