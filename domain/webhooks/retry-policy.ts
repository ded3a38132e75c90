/** Longest wait a receiver's Retry-After may ask for; beyond it the schedule's own wait applies. */
export const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;

/**
 * Seconds to wait before attempt `attemptIndex` (0-based): the schedule's wait, or longer when the
 * receiver asked for it with Retry-After on the previous attempt.
 */
export function waitBeforeAttempt(schedule: readonly number[], attemptIndex: number, retryAfterSeconds?: number): number {
  const planned = schedule[attemptIndex] ?? 0;
  if (retryAfterSeconds === undefined || retryAfterSeconds > MAX_RETRY_AFTER_SECONDS) return planned;
  return Math.max(planned, retryAfterSeconds);
}

/** Parses Retry-After as delta-seconds or an HTTP date. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * Why an endpoint whose receiver answered 410 Gone was disabled. Provisioning a new URL or secret enables such an
 * endpoint again; one disabled on request stays disabled until enabled on request.
 */
export const ENDPOINT_GONE_REASON = 'Receiver answered 410 Gone';
