import { DomainError } from '../errors.ts';

/**
 * A lead request with one or more invalid fields; `problems` names each one (`email: must be at most 320
 * characters`), so a client fixes them all at once. A validation DomainError for transports that show one message.
 */
export class LeadValidationError extends DomainError {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    // At most this many are told, then how many more: a request cannot make its answer larger than itself.
    const told = problems.length > MAX_PROBLEMS_TOLD ? [...problems.slice(0, MAX_PROBLEMS_TOLD), `… and ${problems.length - MAX_PROBLEMS_TOLD} more`] : problems;
    super('validation', problems.length === 1 ? problems[0]! : `${problems.length} invalid fields: ${told.join('; ')}`, { field: problems[0]?.split(':')[0] });
    this.problems = told;
    this.name = 'LeadValidationError';
  }
}

const MAX_PROBLEMS_TOLD = 50;

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
