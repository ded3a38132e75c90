import { GraphQLError, type ASTNode, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { ArgumentValidationError } from 'type-graphql';
import type { ValidationError } from 'class-validator';
import { DomainError, type ErrorCode } from '../../domain/errors.ts';
import { maskCardNumbers } from '../../domain/payments/card-echo.ts';
import { outageAsUnavailable } from '../http/outages.ts';

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

/**
 * A request refused before anything runs (an operation limit, hostile text, introspection without a caller). It carries
 * its own code and HTTP status; Apollo's validation wrapper would otherwise relabel it GRAPHQL_VALIDATION_FAILED.
 */
export class RejectedOperationError extends GraphQLError {
  constructor(message: string, code: string, options: { field?: string; status?: number; node?: ASTNode } = {}) {
    super(message, { nodes: options.node, extensions: { code, ...(options.field ? { field: options.field } : {}), http: { status: options.status ?? 400 } } });
  }
}

/** graphql's parser stops at the token limit (operation-limits.ts) with a syntax error (spelt "more that" in 16.x); it deserves its own code. */
const TOKEN_LIMIT = /^Syntax Error: Document contains more th(?:an|at) (\d+) tokens/;

/** What the parser's error says when a document nests deeper than the call stack goes (V8's RangeError). */
const PARSER_OUT_OF_STACK = 'Maximum call stack size exceeded';

/** The rejection behind an error, whether thrown by a plugin or reported by a validation rule (then wrapped by Apollo). */
function rejectionOf(error: unknown): RejectedOperationError | undefined {
  if (error instanceof RejectedOperationError) return error;
  return error instanceof GraphQLError && error.originalError instanceof RejectedOperationError ? error.originalError : undefined;
}

/**
 * Domain errors keep their message and gain a code; anything unexpected is masked. A card number quoted by a message
 * (an id or value given in the wrong place: `Value is not a valid UUID: 4242…`) is masked as REST's error answers mask it.
 */
export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const answer = answerOf(formatted, error);
  return { ...answer, message: maskCardNumbers(answer.message) };
}

function answerOf(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const rejection = rejectionOf(error);
  if (rejection) {
    const { code, field } = rejection.extensions;
    return { message: rejection.message, locations: formatted.locations, extensions: { code, ...(field ? { field } : {}) } };
  }
  const parseFailed = formatted.extensions?.code === 'GRAPHQL_PARSE_FAILED';
  const tokenLimit = parseFailed ? TOKEN_LIMIT.exec(formatted.message) : null;
  if (tokenLimit) {
    return { message: `The document has more than ${tokenLimit[1]} tokens; send a smaller query`, extensions: { code: 'QUERY_TOO_LARGE' } };
  }
  // Lists or objects written thousands deep within the token limit run graphql's recursive parser out of stack.
  if (parseFailed && formatted.message.includes(PARSER_OUT_OF_STACK)) {
    return { message: 'The document nests lists or objects too deeply; send a flatter query', extensions: { code: 'QUERY_TOO_LARGE' } };
  }
  const original = outageAsUnavailable(unwrapResolverError(error));
  if (original instanceof DomainError) {
    return {
      message: original.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: {
        code: GRAPHQL_CODES[original.code],
        ...(original.details.field ? { field: original.details.field } : {}),
        ...(original.details.retryAfterSeconds !== undefined ? { retryAfterSeconds: original.details.retryAfterSeconds } : {}),
      },
    };
  }
  if (isArgumentProblem(original)) {
    const problems = argumentProblems(original.extensions.validationErrors as ValidationError[]);
    return {
      message: problems.map((p) => p.message).join('; '),
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: 'BAD_USER_INPUT', ...(problems[0] ? { field: problems[0].field } : {}) },
    };
  }
  const code = formatted.extensions?.code;
  if (original instanceof GraphQLError || (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR')) return formatted;
  return { message: 'Internal server error', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}

/**
 * The error behind one that the answer masks as `INTERNAL_SERVER_ERROR` (a bug, an outage), for the log; undefined for
 * the errors a caller is told about (domain errors, refused operations, bad arguments, GraphQL's own).
 */
export function unexpectedCause(error: GraphQLError): unknown {
  if (rejectionOf(error)) return undefined;
  const original = unwrapResolverError(error);
  if (original instanceof DomainError || isArgumentProblem(original) || original instanceof GraphQLError) return undefined;
  const code = error.extensions?.code;
  if (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR') return undefined;
  return original ?? error;
}

/**
 * Arguments class-validator refused. type-graphql also reports a validator that crashed as an
 * ArgumentValidationError (its `validationErrors` then the exception, not a list): that one is a bug, not bad input.
 */
function isArgumentProblem(error: unknown): error is ArgumentValidationError {
  return error instanceof ArgumentValidationError && Array.isArray(error.extensions.validationErrors);
}

/** class-validator's messages already name the argument ("limit must not be greater than 200"); nested inputs get a dotted path. */
function argumentProblems(errors: readonly ValidationError[], parent = ''): { field: string; message: string }[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((text) => {
      // class-validator's `IsIn` says "must be one of the following values: a, b"; every API says "must be one of: a, b".
      const message = text.replace(' must be one of the following values: ', ' must be one of: ');
      return { field, message: parent ? `${parent}.${message}` : message };
    });
    return [...own, ...argumentProblems(error.children ?? [], field)];
  });
}
