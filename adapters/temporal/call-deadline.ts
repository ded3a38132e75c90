import type { Client } from '@temporalio/client';

/**
 * A call to Temporal that must end within `timeoutMs`: a server that accepts the connection and never answers (frozen,
 * overloaded past its queues) fails it with DEADLINE_EXCEEDED, which the APIs answer 503 as Temporal being away
 * (`isTemporalOutage`), instead of holding the request, and its caller, for as long as the server stays silent.
 */
export function withinDeadline<T>(client: Client, timeoutMs: number | undefined, call: () => Promise<T>): Promise<T> {
  return client.withDeadline(Date.now() + (timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS), call);
}

/** `TEMPORAL_CALL_TIMEOUT_MS`'s default, for adapters built without the setting. */
const DEFAULT_CALL_TIMEOUT_MS = 10_000;
