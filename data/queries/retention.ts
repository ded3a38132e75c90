import type { EntityManager } from '@mikro-orm/postgresql';

/** The tables that grow with traffic and are purged once their rows have served their purpose. */
export type RetentionTable =
  | 'submit_attempts'
  | 'idempotency_keys'
  | 'action_idempotency_keys'
  | 'webhook_deliveries'
  | 'rate_limit_windows'
  | 'email_idempotency_keys'
  | 'card_security_code_keys';

/**
 * Which rows of each table are expired, given `?` = the table's retention in seconds (by the database's clock,
 * the one `created_at`/`completed_at` defaults use).
 */
const EXPIRED: Record<RetentionTable, string> = {
  submit_attempts: `created_at < now() - make_interval(secs => ?)`,
  idempotency_keys: `created_at < now() - make_interval(secs => ?)`,
  action_idempotency_keys: `created_at < now() - make_interval(secs => ?)`,
  // A pending delivery is still being retried: only ended ones expire, counted from their end. Attempts go with them (on delete cascade).
  webhook_deliveries: `state <> 'pending' and completed_at < now() - make_interval(secs => ?)`,
  rate_limit_windows: `window_start < now() - make_interval(secs => ?)`,
  email_idempotency_keys: `created_at < now() - make_interval(secs => ?)`,
  // A key past its end opens nothing any more (`findSecurityCodeKey`); deleting it makes that so for good.
  card_security_code_keys: `destroy_after < now() - make_interval(secs => ?)`,
};

/**
 * Deletes at most `limit` expired rows of the table and returns how many it deleted. Rows are addressed by
 * `ctid` (a TID scan), which works alike for every table whatever its key; one short statement per batch,
 * so no lock is held long and no transaction grows with the backlog.
 */
export async function deleteExpiredRows(em: EntityManager, table: RetentionTable, retentionSeconds: number, limit: number): Promise<number> {
  const [row] = await em.execute<{ deleted: string }[]>(
    `with deleted as (
       delete from ${table} where ctid = any(array(select ctid from ${table} where ${EXPIRED[table]} limit ?)) returning 1)
     select count(*) as deleted from deleted`,
    [retentionSeconds, limit],
  );
  return Number(row?.deleted ?? 0);
}

/** The longest card velocity window any product sets: submit attempts must outlive it. */
export async function findLongestCardWindowSeconds(em: EntityManager): Promise<number> {
  const [row] = await em.execute<{ seconds: number | null }[]>(`select max(card_submit_window_seconds) as seconds from products`);
  return row?.seconds ?? 0;
}
