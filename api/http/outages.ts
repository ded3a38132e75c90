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

/**
 * A failure caused by Temporal or PostgreSQL being away, as the 503 it is (with `Retry-After`), logged as a warning
 * when a logger is given (GraphQL's error formatter has none: its errors plugin logs the outage); anything else
 * unchanged. Every API's error handler reads a failure through this first, so an outage is never a bare 500: a
 * merchant told 500 for a payment that went through might send it again without its key.
 */
export function outageAsUnavailable(error: unknown, log?: Pick<FastifyBaseLogger, 'warn'>): unknown {
  if (isTemporalOutage(error)) {
    log?.warn({ err: error }, 'Temporal unreachable: answered 503');
    return new DomainError('unavailable', TEMPORAL_OUTAGE_MESSAGE, { retryAfterSeconds: 5 });
  }
  if (isDatabaseOutage(error)) {
    log?.warn({ err: error }, 'PostgreSQL unreachable: answered 503');
    return new DomainError('unavailable', DATABASE_OUTAGE_MESSAGE, { retryAfterSeconds: 5 });
  }
  return error;
}
