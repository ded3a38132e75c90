import { DomainError } from '../errors.ts';

/**
 * A lead request with one or more invalid fields; `problems` names each one (`email: must be at most 320
 * characters`), so a client fixes them all at once. A validation DomainError for transports that show one message.
 */
export class LeadValidationError extends DomainError {
  constructor(readonly problems: readonly string[]) {
    super('validation', problems.length === 1 ? problems[0]! : `${problems.length} invalid fields: ${problems.join('; ')}`, { field: problems[0]?.split(':')[0] });
    this.name = 'LeadValidationError';
  }
}

/**
 * A lead query string with invalid parameters (`limit=101`, an unknown filter): the request itself is malformed,
 * so it is answered 400 rather than 422, with the same `validation_failed` code and a detail per parameter.
 */
export class LeadQueryError extends LeadValidationError {
  constructor(problems: readonly string[]) {
    super(problems);
    this.name = 'LeadQueryError';
  }
}
