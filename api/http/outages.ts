import type { FastifyBaseLogger } from 'fastify';
import { isTemporalOutage } from '../../adapters/temporal/outages.ts';
import { DomainError } from '../../domain/errors.ts';
import { isDatabaseOutage } from '../../data/database-outage.ts';

/** What a caller is told when Temporal, which runs what the request asked for, is away. */
export const TEMPORAL_OUTAGE_MESSAGE =
  'The workflow engine could not be reached; what was asked may still take effect. Retry, with the same idempotency key where the request has one, to get its outcome';

/** What a caller is told when PostgreSQL went away while the request ran. */
export const DATABASE_OUTAGE_MESSAGE =
  'The database could not be reached; what was asked may have taken effect. Retry, with the same idempotency key where the request has one, to get its outcome';

/** What a read (GET) is told: it changes nothing, so there is no outcome to get with a key. */
const READ_OUTAGE_MESSAGE = { temporal: 'The workflow engine could not be reached; nothing was changed. Ask again shortly', database: 'The database could not be reached; nothing was changed. Ask again shortly' };

/**
 * A failure caused by Temporal or PostgreSQL being away, as the 503 it is (with `Retry-After`), logged as a warning
 * when a logger is given (GraphQL's error formatter has none: its errors plugin logs the outage); anything else
 * unchanged. Every API's error handler reads a failure through this first, so an outage is never a bare 500: a
 * merchant told 500 for a payment that went through might send it again without its key. A request read by its HTTP
 * method as a read (GET, HEAD) took nothing (`nothingTaken`), and is told so.
 */
export function outageAsUnavailable(error: unknown, log?: Pick<FastifyBaseLogger, 'warn'>, method?: string): unknown {
  const read = method === 'GET' || method === 'HEAD';
  if (isTemporalOutage(error)) {
    log?.warn({ err: error }, 'Temporal unreachable: answered 503');
    return new DomainError('unavailable', read ? READ_OUTAGE_MESSAGE.temporal : TEMPORAL_OUTAGE_MESSAGE, { retryAfterSeconds: 5, nothingTaken: read });
  }
  if (isDatabaseOutage(error)) {
    log?.warn({ err: error }, 'PostgreSQL unreachable: answered 503');
    return new DomainError('unavailable', read ? READ_OUTAGE_MESSAGE.database : DATABASE_OUTAGE_MESSAGE, { retryAfterSeconds: 5, nothingTaken: read });
  }
  return error;
}
