import { ConnectionException } from '@mikro-orm/core';

/**
 * SQLSTATEs by which PostgreSQL says it went away or is not taking work now, not that it refused the statement: the
 * connection exceptions of class 08 (not 08P01, a protocol violation: a bug), and 57P01-57P03 (shut down by an
 * operator, crashed, starting or stopping).
 */
const AWAY_STATES = /^(0800[0-46]|57P0[123])$/;
/** What `pg` and Node say of a connection lost or never made (a host name that stopped resolving included). */
const AWAY_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** …and its messages without a code (`timeout expired`: a connection not opened within the connect timeout). */
const AWAY_MESSAGES = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|timeout expired$)/;

/**
 * Whether a failure is PostgreSQL being away (down, restarting, the connection cut), found in the error or its causes:
 * the statement may or may not have been committed before it went, so the caller is told to retry, never 500.
 */
export function isDatabaseOutage(error: unknown): boolean {
  let cause: unknown = error;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++, cause = cause.cause) {
    // An HTTP error of the request itself (a client that hung up mid-body is ECONNRESET too): not the database.
    if (typeof (cause as { statusCode?: unknown }).statusCode === 'number') return false;
    if (cause instanceof ConnectionException) return true;
    const { code, sqlState } = cause as { code?: unknown; sqlState?: unknown };
    for (const value of [code, sqlState]) {
      if (typeof value === 'string' && (AWAY_STATES.test(value) || AWAY_CODES.has(value))) return true;
    }
    if (AWAY_MESSAGES.test(cause.message)) return true;
  }
  return false;
}
