/**
 * Typed failures of the domain. Each transport (REST, GraphQL) maps the code to its own shape in
 * one place (`api/http-errors.ts`, `api/graphql/errors.ts`); the domain never knows HTTP.
 */
export const ERROR_CODES = [
  'validation',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'gone',
  'rate_limited',
  'payload_too_large',
  'unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: {
      field?: string;
      retryAfterSeconds?: number;
      /** An `unavailable` refusal that took nothing of its request (not started, not kept): sending it again is safe. */
      nothingTaken?: boolean;
    } = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const validationError = (field: string, message: string) => new DomainError('validation', message, { field });
