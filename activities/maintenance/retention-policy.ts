import type { RetentionTable } from '../../data/queries/retention.ts';

const HOUR = 60 * 60;
const DAY = 24 * HOUR;

/**
 * How long each growing table keeps a row (docs/decisions.md, "Retention"). Constants, not settings: each
 * period follows from a rule of the product, and shortening one would break that rule.
 */
export const RETENTION_SECONDS: Record<RetentionTable, number> = {
  // Velocity counts look back 24 hours by e-mail and a product's card window (10 minutes by default): see below for longer ones.
  submit_attempts: 2 * DAY,
  // A client may retry a keyed submit for at least 24 hours (Stripe's promise); a week leaves room for slow retry queues.
  idempotency_keys: 7 * DAY,
  action_idempotency_keys: 7 * DAY,
  // Counted from a delivery's end: a month for a tenant to look up what was sent and how the receiver answered.
  webhook_deliveries: 30 * DAY,
  // Windows last a minute; the limiter drops a subject's old windows itself, this catches subjects that went quiet.
  rate_limit_windows: HOUR,
  // Spec 8: an e-mail idempotency key lives 7 days (an older claim is already taken over by a new request; this only frees the space).
  email_idempotency_keys: 7 * DAY,
  // Destroyed as soon as it is due (`SECURITY_CODE_KEY_GRACE_MS` after its sealing period): no CVV outlives its use.
  card_security_code_keys: 0,
};

/** A product may set a card velocity window longer than the default retention: attempts then outlive it, by an hour. */
export function submitAttemptRetentionSeconds(longestCardWindowSeconds: number): number {
  return Math.max(RETENTION_SECONDS.submit_attempts, longestCardWindowSeconds + HOUR);
}

/** Rows per delete statement: small enough for short locks and little WAL per statement. */
export const PURGE_BATCH_SIZE = 5_000;
/** Batches per table and run: a backlog beyond this (a first run on an old database) is finished by later runs. */
export const PURGE_MAX_BATCHES = 200;
