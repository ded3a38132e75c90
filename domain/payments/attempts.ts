/** What one authorization attempt on one merchant account looks like to the payment process. */

export interface RawExchange {
  /** Adapter name, e.g. `sandbox`. */
  readonly gateway: string;
  /** HTTP status of the processor's answer; 0 when none came (timeout, connection refused). */
  readonly httpStatus: number;
  /** The processor's answer as text (never contains the card number). */
  readonly response: string;
}

export interface MerchantCandidate {
  readonly merchantAccountId: number;
  readonly mid: string;
  readonly gateway: string;
  readonly descriptor: string;
  readonly acquiringBank: string;
  readonly midPortalUrl: string;
  readonly allowRetriesFromOtherMids: boolean;
  readonly allowInsufficientFundsRetries: boolean;
}

/** An attempt's outcome as the workflow sees it; `unknown` must be resolved by an inquiry first. */
export type AttemptOutcome =
  | { kind: 'approved'; statusId: number; processorTransactionId: string; authCode: string; eci?: string }
  | { kind: 'declined'; statusId: number; processorTransactionId?: string }
  | { kind: 'challenge'; processorTransactionId: string; challengeUrl: string; redirect?: boolean }
  | { kind: 'unknown'; reason: string }
  | { kind: 'not_found' };

export interface AttemptResult {
  readonly reference: string;
  readonly transactionId: string;
  readonly outcome: AttemptOutcome;
  readonly exchange: RawExchange;
}

/** A 3-D Secure completion asked of the processor: not finished while the cardholder has not answered the challenge. */
export type ChallengeCompletion = { finished: false } | { finished: true; attempt: AttemptResult };

/** The attempts one order makes at most: its first merchant account, then one cascade to a second. */
export const MAX_ATTEMPTS_PER_ORDER = 2;

/** Unique per attempt: the processor deduplicates on it, and a status inquiry asks by it. */
export const attemptReference = (submitOrderId: number, attemptNumber: number) => `ord${submitOrderId}-a${attemptNumber}`;

/**
 * The failure type of an attempt the processor answered but PostgreSQL refuses to record for good (a constraint, a
 * value it cannot hold). Sending it again or asking about it gets the same answer and the same refusal, so the payment
 * ends failed at once, voiding what the failure's details say the processor holds (`UnrecordedAttempt`).
 */
export const ATTEMPT_NOT_RECORDED = 'AttemptNotRecorded';

/** The details of an `ATTEMPT_NOT_RECORDED` failure. */
export interface UnrecordedAttempt {
  readonly sqlState?: string;
  /** What the processor authorized (or holds for a challenge) under the attempt: to be voided. */
  readonly authorized?: { readonly gateway: string; readonly processorTransactionId: string };
}

/**
 * The longest a processor's answer fields may be to be kept (the columns of `transactions` and `orders` they are
 * stored in). An adapter reads an answer within them: an auth code cut, an ECI that is none dropped, an id or a
 * challenge URL beyond them unreadable, so recording an attempt the processor answered is never refused by the database.
 */
export const PROCESSOR_ANSWER_LIMITS = { transactionId: 100, authCode: 20, eci: 2, challengeUrl: 2048 } as const;

/**
 * PostgreSQL cannot hold a NUL character, even escaped in JSON: a processor answer carrying one is kept with
 * U+FFFD in its place, since failing to record an attempt the processor may have authorized is worse.
 */
export function storableExchange(exchange: RawExchange): RawExchange {
  return exchange.response.includes('\0') ? { ...exchange, response: exchange.response.replaceAll('\0', '\uFFFD') } : exchange;
}
