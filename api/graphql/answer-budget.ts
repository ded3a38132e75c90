import type { ApolloServerPlugin } from '@apollo/server';
import { DomainError } from '../../domain/errors.ts';
import { GRAPHQL_CODES } from './errors.ts';

/**
 * How much stored free-form data (a lead's scans, pending data and tracking fields) one GraphQL answer may carry. The
 * cost limit counts fields, not their size: a lead's scans may be 256 KB and cost as much as its id, so one request
 * within every operation limit (a page of 100 leads, its scans under 18 aliases) built a 480 MB answer, slowing every
 * tenant's requests, and past V8's longest string failed. Counted as the values are resolved, an answer stops at this
 * size however its query repeats them; real pages (100 leads with every field) stay far below it.
 */
export const ANSWER_DATA_LIMIT_CHARACTERS = 16 * 1024 * 1024;

/** The data an answer has taken so far; one per request. */
export class AnswerBudget {
  private spent = 0;
  /** Set once a value did not fit: the whole answer is then refused (`answerBudgetPlugin`). */
  exceeded = false;
  /** JSON sizes of values already counted: an alias of the same field reads the same object again. */
  private readonly sizes = new WeakMap<object, number>();

  constructor(private readonly limit = ANSWER_DATA_LIMIT_CHARACTERS) {}

  /** The value, counted towards the answer; PAYLOAD_TOO_LARGE when it would take the answer past the limit. */
  take<T>(value: T): T {
    this.spent += this.sizeOf(value);
    if (this.spent > this.limit) {
      this.exceeded = true;
      throw new DomainError('payload_too_large', `The answer would carry more than ${this.limit / (1024 * 1024)} MB of lead data; ask for fewer leads (first) or fewer of their scans, pendingData and trackingFields`);
    }
    return value;
  }

  private sizeOf(value: unknown): number {
    if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null).length;
    let size = this.sizes.get(value);
    if (size === undefined) this.sizes.set(value, (size = JSON.stringify(value).length));
    return size;
  }
}

/**
 * An answer that ran past its budget is answered with that one error and no data: the fields resolved before it would
 * be a partial page that looks whole, and each field after it adds one more error of the same kind.
 */
export function answerBudgetPlugin(): ApolloServerPlugin<{ readonly answerBudget: AnswerBudget }> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          if (!contextValue.answerBudget?.exceeded || response.body.kind !== 'single') return;
          const tooLarge = response.body.singleResult.errors?.find((error) => error.extensions?.code === GRAPHQL_CODES.payload_too_large);
          if (tooLarge) response.body.singleResult = { data: null, errors: [{ message: tooLarge.message, extensions: { code: GRAPHQL_CODES.payload_too_large } }] };
        },
      };
    },
  };
}
