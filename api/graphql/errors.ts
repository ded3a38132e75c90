import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { ArgumentValidationError } from 'type-graphql';
import { DomainError, type ErrorCode } from '../../domain/errors.ts';

/** GraphQL error codes of each domain error code; exhaustive like the REST mapping. */
export const GRAPHQL_CODES = {
  validation: 'BAD_USER_INPUT',
  unauthenticated: 'UNAUTHENTICATED',
  forbidden: 'FORBIDDEN',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  gone: 'GONE',
  payload_too_large: 'PAYLOAD_TOO_LARGE',
  rate_limited: 'RATE_LIMITED',
  unavailable: 'SERVICE_UNAVAILABLE',
} as const satisfies Record<ErrorCode, string>;

/** Domain errors keep their message and gain a code; anything unexpected is masked. */
export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof DomainError) {
    return {
      message: original.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: GRAPHQL_CODES[original.code], ...(original.details.field ? { field: original.details.field } : {}) },
    };
  }
  if (original instanceof ArgumentValidationError) {
    return { ...formatted, extensions: { code: 'BAD_USER_INPUT' } };
  }
  const code = formatted.extensions?.code;
  if (original instanceof GraphQLError || (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR')) return formatted;
  return { message: 'Internal server error', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
