import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';

/** Returns the submit result as soon as the authorization outcome is known (early return). */
export const submitUpdate = defineUpdate<SubmitResult>('submit');

/** Sent by `POST /api/{productId}/3ds` after the cardholder's challenge; returns the final result. */
export const completeThreeDSecureUpdate = defineUpdate<SubmitResult, [{ threeDSecureId: string }]>('complete3ds');

/**
 * Failure type of a 3-D Secure completion refused because the payment's final result is already known: the caller
 * reads it with `paymentAnswersQuery`. A refusal leaves no event in the history, where every accepted update does (and
 * Temporal takes at most 2,000 per run).
 */
export const THREE_D_SECURE_FINISHED = 'three_d_secure_finished';

/** The payment's answers as far as they are known, read without writing to its history: the first, and the final result. */
export const paymentAnswersQuery = defineQuery<{ readonly first?: SubmitResult; readonly final?: SubmitResult }>('answers');

/**
 * How a held authorization ended: captured (`approved`), `voided`, `expired` (the processor refused the decision and
 * no longer holds it), or `failed` (the step failed for good). A state other than the one asked for is a refusal,
 * `statusId` saying why (4175 for an authorization expired, voided or already captured at the processor).
 */
export interface AuthorizationDecision {
  readonly state: 'approved' | 'voided' | 'expired' | 'failed';
  readonly statusId: number;
}

/** Failure type of a capture or void refused without changing anything: no authorization waits for that decision. */
export const NOT_AUTHORIZED = 'not_authorized';

/** Sent by `POST /payments/{id}/capture`: captures an authorization made with `capture: false`. */
export const capturePaymentUpdate = defineUpdate<AuthorizationDecision>('capture');

/** Sent by `POST /payments/{id}/void`: releases an authorization made with `capture: false`. */
export const voidPaymentUpdate = defineUpdate<AuthorizationDecision>('void');

/**
 * Sent by a new submit of the same e-mail to the same plan while this payment waits on a 3-D Secure challenge and
 * holds the e-mail's subscription claim: the challenge ends now as if it had expired (voided, the claim released),
 * unless a completion already under way decides first. Answers once the order is settled, with how it ended.
 */
export const supersedeChallengeUpdate = defineUpdate<'expired' | 'completed'>('supersedeChallenge');

/** Failure type of a supersede refused without changing anything: the payment waits on no open challenge. */
export const NO_OPEN_CHALLENGE = 'no_open_challenge';
