import { DomainError } from '../errors.ts';
import type { PaymentWorkflowInput } from './payment-input.ts';
import type { SubmitResult } from './submit-result.ts';

/**
 * Why a payment refuses a 3-D Secure completion without changing anything (the failure type of its update):
 * no such challenge, expired, voided while it waited, the cardholder has not finished the challenge, the processor
 * did not answer. (A payment of an older worker says `expired` for a voided one too.)
 */
export const THREE_D_SECURE_REFUSALS = ['unknown', 'expired', 'voided', 'challenge_pending', 'processor_unavailable'] as const;
export type ThreeDSecureRefusal = (typeof THREE_D_SECURE_REFUSALS)[number];

/**
 * How a 3-D Secure completion ends: the final result (the same every time it is asked), a refusal, or
 * `forgotten`: the payment finished so long ago that its result is no longer kept.
 */
export type ThreeDSecureCompletion = { kind: 'completed'; result: SubmitResult } | { kind: ThreeDSecureRefusal } | { kind: 'forgotten' };

export interface ThreeDSecureRunner {
  completeThreeDSecure(input: { workflowId: string; threeDSecureId: string }): Promise<ThreeDSecureCompletion>;
}

/**
 * How a capture or void of a held authorization ends: `decided` with the payment's new state (the same answer to a
 * repeat), `refused` when no authorization waits for that decision (captured, voided, never held), `not_found`.
 */
export type AuthorizationDecisionResult = { kind: 'decided'; state: 'approved' | 'voided' | 'expired' | 'failed'; statusId: number } | { kind: 'refused' } | { kind: 'not_found' };

/** Runs a payment durably and answers with the submit result (port; the Temporal adapter implements it with Update-With-Start). */
export interface PaymentRunner extends ThreeDSecureRunner {
  /** Captures or voids an authorization made with `capture: false`. */
  decideAuthorization(input: { tenantId: number; submitOrderId: number; decision: 'capture' | 'void' }): Promise<AuthorizationDecisionResult>;
  submit(input: PaymentWorkflowInput): Promise<SubmitResult>;
  /**
   * Ends a payment's open 3-D Secure challenge now, as its expiry would (voided, order `expired`, its subscription
   * claim released), and answers once the order is settled: `expired`, or `completed` when a completion under way
   * decided first. `not_waiting` when the payment waits on no open challenge (or did not answer in time).
   */
  supersedeChallenge(input: { tenantId: number; submitOrderId: number }): Promise<'expired' | 'completed' | 'not_waiting'>;
  /** The answer of an existing payment: its final result once known, else its first; undefined when none was started. */
  resume(tenantId: number, submitOrderId: number): Promise<SubmitResult | undefined>;
  /** Whether a payment under this order id is running, whether or not its order is recorded yet. */
  isStarting(tenantId: number, submitOrderId: number): Promise<boolean>;
}

/**
 * The payment was certainly not started (the gateway's line was full until too late): nothing exists of it, so what
 * its request took before (its velocity slot) can be given back. Answered 503 like any unavailability.
 */
export class PaymentNotStartedError extends DomainError {
  constructor() {
    super('unavailable', 'The gateway is busy; the payment was not started', { nothingTaken: true });
    this.name = 'PaymentNotStartedError';
  }
}

/**
 * The payment was started and did not answer within its caller's time: it goes on, and its outcome is the payment's
 * (`GET /payments/{id}`), or a retry's with the same Idempotency-Key. The error names it, so that a caller who sent no
 * key can look it up rather than send the request again, which would be a second payment.
 */
export class PaymentStillProcessingError extends DomainError {
  constructor(
    readonly paymentId: string,
    keyed: boolean,
  ) {
    super(
      'unavailable',
      keyed
        ? `Payment ${paymentId} is still being processed; retry with the same Idempotency-Key, or GET /payments/${paymentId}, to get its result`
        : `Payment ${paymentId} is still being processed; GET /payments/${paymentId} gives its result (sending the request again would make a second payment)`,
    );
    this.name = 'PaymentStillProcessingError';
  }
}

/**
 * A payment started and not yet recorded (its workflow's first step has not run: no worker free, or none polling):
 * it is no "no such payment", which would tell its caller to pay again.
 */
export class PaymentNotRecordedYetError extends DomainError {
  constructor(paymentId: string) {
    super('unavailable', `Payment ${paymentId} has started and is not recorded yet; ask again shortly`, { retryAfterSeconds: 5 });
    this.name = 'PaymentNotRecordedYetError';
  }
}
