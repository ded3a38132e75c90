import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLContext } from './context.ts';
import { unexpectedCause } from './errors.ts';
import { isTemporalOutage } from '../../adapters/temporal/outages.ts';
import { isDatabaseOutage } from '../../data/database-outage.ts';

/**
 * Logs every error the answer masks as `INTERNAL_SERVER_ERROR`, with the request's logger (its request id, and the
 * redaction every log line gets), as REST logs its 500s: the caller sees "Internal server error" and an operator
 * needs the cause. Errors a caller is told about are not logged.
 */
export function unexpectedErrorsPlugin(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ contextValue, errors, operationName }) {
          for (const error of errors) {
            const cause = unexpectedCause(error);
            // Temporal or PostgreSQL being away is told to the caller (SERVICE_UNAVAILABLE) and logged as REST logs it.
            if (isTemporalOutage(cause)) contextValue.log.warn({ err: cause, operationName, path: error.path }, 'Temporal unreachable: answered SERVICE_UNAVAILABLE');
            else if (isDatabaseOutage(cause)) contextValue.log.warn({ err: cause, operationName, path: error.path }, 'PostgreSQL unreachable: answered SERVICE_UNAVAILABLE');
            else if (cause !== undefined) contextValue.log.error({ err: cause, operationName, path: error.path }, 'unexpected error');
          }
        },
      };
    },
  };
}
