import type { EntityManager } from '@mikro-orm/postgresql';

export interface NewWebhookDelivery {
  readonly id: string;
  readonly tenantId: number;
  readonly endpointId: string;
  readonly eventType: string;
  /** The exact JSON body that is signed and sent. */
  readonly body: string;
}

/**
 * The ids of the tenant's enabled endpoints subscribed to the event type (no types listed: every type). One indexed
 * read, no entities built: it runs after every payment.
 */
export async function findSubscribedEndpointIds(em: EntityManager, query: { tenantId: number; eventType: string }): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    `select id from webhook_endpoints
      where tenant_id = ? and disabled_at is null and (cardinality(event_types) = 0 or ? = any(event_types))
      order by created_at, id`,
    [query.tenantId, query.eventType],
  );
  return rows.map((row) => row.id);
}

/** Those of `endpointIds` that are the tenant's and enabled, whatever event types they subscribe to. */
export async function findEnabledEndpointIds(em: EntityManager, query: { tenantId: number; endpointIds: readonly string[] }): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    `select id from webhook_endpoints
      where tenant_id = ? and disabled_at is null and id::text in (select jsonb_array_elements_text(cast(? as jsonb)))
      order by created_at, id`,
    [query.tenantId, JSON.stringify(query.endpointIds)],
  );
  return rows.map((row) => row.id);
}

/**
 * Records deliveries; one whose id is already recorded is left as it is, so recording the same event again
 * (a retried activity) yields the same deliveries, not new ones.
 */
export async function insertWebhookDeliveries(em: EntityManager, deliveries: readonly NewWebhookDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  // One JSON parameter carries every row: the driver would spread array parameters into lists.
  await em.execute(
    `insert into webhook_deliveries (id, tenant_id, endpoint_id, event_type, body, state, attempt_count, created_at)
     select d.id, d.tenant_id, d.endpoint_id, d.event_type, d.body, 'pending', 0, now()
       from jsonb_to_recordset(?::jsonb) as d(id varchar, tenant_id int, endpoint_id uuid, event_type varchar, body text)
     on conflict (id) do nothing`,
    [JSON.stringify(deliveries.map((d) => ({ id: d.id, tenant_id: d.tenantId, endpoint_id: d.endpointId, event_type: d.eventType, body: d.body })))],
  );
}

/** A delivery run the sweep starts: the first one, or a redelivery (`redelivery`). */
export interface UnstartedDelivery {
  readonly deliveryId: string;
  readonly redelivery?: { readonly number: number; readonly attemptsBefore: number };
}

/**
 * Delivery runs asked for before `createdBefore` (recorded, or claimed to be sent again), not attempted yet and not
 * swept yet, oldest first: ones whose workflow a gateway did not start (it recorded the event, or claimed the
 * redelivery, and then could not reach Temporal, or stopped). A run whose workflow runs but has not attempted yet is
 * listed too; starting it again is refused by its workflow id.
 */
export async function findUnstartedDeliveries(em: EntityManager, input: { createdBefore: Date; limit: number }): Promise<UnstartedDelivery[]> {
  const rows = await em.execute<{ id: string; redeliveries: number; attempts_before_run: number }[]>(
    `select id, redeliveries, attempts_before_run from webhook_deliveries
      where state = 'pending' and swept_at is null and attempt_count = attempts_before_run and coalesce(redelivered_at, created_at) < ?
      order by coalesce(redelivered_at, created_at) limit ?`,
    [input.createdBefore, input.limit],
  );
  return rows.map((row) => ({ deliveryId: row.id, ...(row.redeliveries > 0 ? { redelivery: { number: row.redeliveries, attemptsBefore: row.attempts_before_run } } : {}) }));
}

/**
 * Marks the runs the sweep started: each is swept once, so one whose workflow closed without attempting it (its
 * secret unreadable, say) is not listed again, ahead of newer ones, for ever. A delivery is marked only at the run it
 * was listed at: one sent again meanwhile is a new run, for the next sweep.
 */
export async function markDeliveriesSwept(em: EntityManager, runs: readonly { deliveryId: string; run: number }[]): Promise<void> {
  if (runs.length === 0) return;
  // One JSON parameter: the driver would spread an array parameter into a list.
  await em.execute(
    `update webhook_deliveries d set swept_at = now()
       from jsonb_to_recordset(?::jsonb) as r(id varchar, run int)
      where d.id = r.id and d.redeliveries = r.run and d.swept_at is null`,
    [JSON.stringify(runs.map((r) => ({ id: r.deliveryId, run: r.run })))],
  );
}

/** A failed delivery claimed to be sent again: its new run's number, and where its attempts' numbering resumes. */
export interface ClaimedRedelivery {
  readonly deliveryId: string;
  readonly tenantId: number;
  readonly endpointId: string;
  readonly eventType: string;
  readonly redelivery: number;
  readonly attemptsBefore: number;
  readonly createdAt: Date;
}

/**
 * Claims a failed delivery of the tenant to be sent again, in one conditional statement: only a delivery that ended
 * `failed` or `endpoint_disabled`, sent again fewer than `maxRedeliveries` times, to an endpoint enabled now, is set
 * `pending` again as a new run (its number one more, its attempts counted from the ones before). Of claims at once,
 * one wins; the others find it pending. Not swept yet: the unstarted-deliveries sweep starts the run if its caller
 * could not. Undefined: not claimed.
 */
export async function claimRedelivery(em: EntityManager, claim: { tenantId: number; deliveryId: string; maxRedeliveries: number }): Promise<ClaimedRedelivery | undefined> {
  const [row] = await em.execute<{ id: string; tenant_id: number; endpoint_id: string; event_type: string; redeliveries: number; attempt_count: number; created_at: Date }[]>(
    `update webhook_deliveries d
        set state = 'pending', completed_at = null, redeliveries = d.redeliveries + 1, redelivered_at = now(), attempts_before_run = d.attempt_count, swept_at = null
      where d.id = ? and d.tenant_id = ? and d.state in ('failed', 'endpoint_disabled') and d.redeliveries < ?
        and exists (select 1 from webhook_endpoints e where e.id = d.endpoint_id and e.disabled_at is null)
      returning d.id, d.tenant_id, d.endpoint_id, d.event_type, d.redeliveries, d.attempt_count, d.created_at`,
    [claim.deliveryId, claim.tenantId, claim.maxRedeliveries],
  );
  return (
    row && {
      deliveryId: row.id,
      tenantId: row.tenant_id,
      endpointId: row.endpoint_id,
      eventType: row.event_type,
      redelivery: row.redeliveries,
      attemptsBefore: row.attempt_count,
      createdAt: new Date(row.created_at),
    }
  );
}

/** Where a delivery of the tenant stands (why a redelivery was not claimed); undefined: no such delivery of the tenant. */
export async function findDeliveryStanding(
  em: EntityManager,
  query: { tenantId: number; deliveryId: string },
): Promise<{ state: string; redeliveries: number; endpointDisabled: boolean } | undefined> {
  const [row] = await em.execute<{ state: string; redeliveries: number; endpoint_disabled: boolean }[]>(
    `select d.state, d.redeliveries, e.disabled_at is not null as endpoint_disabled from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where d.id = ? and d.tenant_id = ?`,
    [query.deliveryId, query.tenantId],
  );
  return row && { state: row.state, redeliveries: row.redeliveries, endpointDisabled: row.endpoint_disabled };
}
