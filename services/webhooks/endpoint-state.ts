import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
import { setEndpointEnabled, type EndpointState } from '../../data/queries/webhook-endpoints.ts';
import { DomainError, validationError } from '../../domain/errors.ts';
import { ENDPOINT_GONE_REASON } from '../../domain/webhooks/retry-policy.ts';

/**
 * Stops (or resumes) sending a tenant's events to one endpoint: a disabled endpoint gets no new delivery, and a pending
 * one ends `endpoint_disabled` at its next attempt (`redeliverWebhook` sends it once the endpoint is enabled again).
 * An endpoint the operator disabled (a receiver that misbehaves) is the operator's to enable: the tenant's enable is
 * refused. Asking for the state it is in already changes nothing; a change is audited with it. Answers the state this
 * request left (or found).
 */
export async function changeEndpointState(
  em: EntityManager,
  change: { tenantId: number; endpointId: string; enabled: boolean; reason?: string; byOperator: boolean; actor: string },
): Promise<EndpointState> {
  // A blank reason is none. The reason a 410 Gone leaves is the gateway's own: provisioning enables such an endpoint
  // again on a new address.
  const reason = change.reason?.trim() || undefined;
  if (reason === ENDPOINT_GONE_REASON) throw validationError('reason', 'This reason is the one a receiver answering 410 Gone leaves; give your own');
  return em.transactional(async (tx) => {
    const { outcome, state } = await setEndpointEnabled(tx, { ...change, reason });
    if (outcome === 'not_found' || !state) throw new DomainError('not_found', 'Webhook endpoint not found', { field: 'endpointId' });
    if (outcome === 'held_by_operator') throw new DomainError('forbidden', 'The operator disabled this endpoint: only the operator can enable it', { field: 'endpointId' });
    if (outcome === 'unchanged') return state;
    const action = change.enabled ? 'webhook_endpoint.enabled' : 'webhook_endpoint.disabled';
    const changes = change.enabled ? {} : { reason: reason ?? null, ...(change.byOperator ? { byOperator: true } : {}) };
    await recordAuditEntry(tx, { tenantId: change.tenantId, actor: change.actor, action, entityType: 'WebhookEndpoint', entityId: change.endpointId, changes });
    return state;
  });
}
