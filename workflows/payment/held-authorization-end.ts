import { ActivityFailure, ApplicationFailure, TimeoutFailure, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS, WORKER_LOSS_NOTICED_AFTER } from '../contract/call-timeouts.ts';
import type { HoldEnd } from '../../activities/payments-api/authorization-hold.activities.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';

/**
 * Held authorizations (`capture: false`) always end in a final state, even when the processor refuses their capture
 * or void, or never answers it. Workflow code: deterministic, every wait a durable timer.
 */

/** Same bounds as the other processor calls of a payment: about 7 minutes of retries per call. */
const { inquireHeldAuthorization, captureHeldAuthorization, voidHeldAuthorization, endHeldAuthorization } = proxyActivities<Activities>({
  startToCloseTimeout: OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS,
  heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
  retry: { maximumAttempts: 20, initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** The held authorization at the processor and in the database. */
export interface HeldTarget {
  readonly submitOrderId: number;
  readonly transactionId: string;
  readonly gateway: string;
  readonly processorTransactionId: string;
  readonly timeoutMs: number;
}

/** What a capture or void call came to: done, refused by the processor (with its status), or no answer at all. */
export type SentDecision = { readonly kind: 'done'; readonly statusId: number } | { readonly kind: 'refused'; readonly statusId: number } | { readonly kind: 'unanswered' };

/** How the hold ended, and the status the decision is answered with. */
export interface HoldEnding {
  readonly state: HoldEnd;
  readonly statusId: number;
}

/** Between two rounds of asking a processor that does not answer: from a minute up to an hour, for as long as it takes. */
const FIRST_WAIT_SECONDS = 60;
const LONGEST_WAIT_SECONDS = 3600;
/** How long a processor may stay silent (or the database away) before the hold is given up: a card network's own hold is about a week. */
const GIVE_UP_AFTER_MS = 7 * 24 * 3600 * 1000;

/** Sends the decision once (the activity retries for minutes); its outcome, never an exception for a processor's silence. */
export async function sendDecision(decision: 'capture' | 'void', target: HeldTarget): Promise<SentDecision> {
  if (decision === 'capture') {
    const captured = await captureHeldAuthorization(target);
    return captured.captured ? { kind: 'done', statusId: captured.statusId } : { kind: 'refused', statusId: captured.statusId };
  }
  const voided = await voidHeldAuthorization(target);
  return voided.voided ? { kind: 'done', statusId: voided.statusId } : { kind: 'refused', statusId: voided.statusId };
}

/**
 * A capture or void the processor refused, or never answered (`sent.kind === 'unanswered'`): the processor's status
 * inquiry decides how the hold ends, and the order is moved there. Never a blind void: a capture whose answers were
 * lost may have charged the card. Unanswered and still held, the decision is sent again (both are idempotent at the
 * processor); a refusal of an authorization it still holds ends it `expired` here (nothing can decide it any more,
 * and the processor releases it at the end of its own hold). Only an inquiry failing for good ends it `failed`.
 */
export async function endUndecidedHold(decision: 'capture' | 'void', target: HeldTarget, sent: Exclude<SentDecision, { kind: 'done' }>): Promise<HoldEnding> {
  let refusedStatusId = sent.kind === 'refused' ? sent.statusId : undefined;
  const giveUpAt = Date.now() + GIVE_UP_AFTER_MS;
  for (let round = 0; ; round++) {
    if (round > 0) await sleep(Math.min(FIRST_WAIT_SECONDS * 2 ** (round - 1), LONGEST_WAIT_SECONDS) * 1000);
    if (Date.now() >= giveUpAt) {
      log.error('Held authorization: the processor gave no usable answer for a week; the payment ends failed', { submitOrderId: target.submitOrderId, decision, refusedStatusId });
      return end(target, 'failed', refusedStatusId ?? StatusId.SYSTEM_TIMEOUT);
    }
    let found: Awaited<ReturnType<typeof inquireHeldAuthorization>>;
    try {
      found = await inquireHeldAuthorization(target);
    } catch (error) {
      if (!isActivityFailure(error)) throw error;
      if (!failedForGood(error)) continue;
      log.error('Held authorization: the processor inquiry failed for good; the payment ends failed', { submitOrderId: target.submitOrderId, reason: reasonOf(error) });
      return end(target, 'failed', refusedStatusId ?? StatusId.SYSTEM_TIMEOUT);
    }
    if (found.state === 'held' && refusedStatusId === undefined) {
      // The decision never reached the processor: send it again.
      const again = await sendDecision(decision, target).catch((error: unknown): SentDecision => {
        if (!isActivityFailure(error)) throw error;
        return { kind: 'unanswered' };
      });
      if (again.kind === 'done') return { state: decision === 'capture' ? 'approved' : 'voided', statusId: again.statusId };
      if (again.kind === 'refused') refusedStatusId = again.statusId;
      continue;
    }
    switch (found.state) {
      case 'captured':
        // The decision's answer may be a refused void's status; the authorization records the processor's (a capture).
        return end(target, 'approved', decision === 'capture' ? found.statusId : (refusedStatusId ?? found.statusId), found.statusId);
      case 'voided':
        return end(target, 'voided', decision === 'void' ? found.statusId : (refusedStatusId ?? found.statusId));
      case 'missing':
        return end(target, 'expired', refusedStatusId ?? found.statusId);
      case 'held':
        log.error('Held authorization: the processor refused the decision but still holds it; ended expired here', { submitOrderId: target.submitOrderId, decision, refusedStatusId });
        // A refusal without a status of its own is recorded as the authorization no longer held (expired).
        return end(target, 'expired', refusedStatusId ?? StatusId.AUTHORIZATION_EXPIRED_OR_ALREADY_CAPTURED);
    }
  }
}

/**
 * Records how the hold ended. The processor has spoken by then (a capture there is money taken), so a database away
 * for longer than the activity's retries is waited out with durable sleeps (up to a week) rather than failing the
 * payment, whose failure path would void; a statement PostgreSQL refuses for good fails it at once.
 */
async function end(target: HeldTarget, state: HoldEnd, statusId: number, recordedStatusId = statusId): Promise<HoldEnding> {
  const giveUpAt = Date.now() + GIVE_UP_AFTER_MS;
  for (let round = 0; ; round++) {
    try {
      // The status goes with it (an activity's input: replay does not compare it, so no patch).
      await endHeldAuthorization({ submitOrderId: target.submitOrderId, transactionId: target.transactionId, end: state, statusId: recordedStatusId });
      return { state, statusId };
    } catch (error) {
      if (!isActivityFailure(error) || failedForGood(error) || Date.now() >= giveUpAt) throw error;
      log.error('Held authorization: its end is not recorded yet; trying again later', { submitOrderId: target.submitOrderId, state, reason: reasonOf(error) });
      await sleep(Math.min(FIRST_WAIT_SECONDS * 2 ** round, LONGEST_WAIT_SECONDS) * 1000);
    }
  }
}

/** The `transaction.updated` change of a hold that ended. */
export function changeOf(state: HoldEnd): 'captured' | 'voided' | 'expired' | 'failed' {
  return state === 'approved' ? 'captured' : state;
}

function isActivityFailure(error: unknown): error is ActivityFailure | ApplicationFailure | TimeoutFailure {
  return error instanceof ActivityFailure || error instanceof ApplicationFailure || error instanceof TimeoutFailure;
}

function failedForGood(error: ActivityFailure | ApplicationFailure | TimeoutFailure): boolean {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure && cause.nonRetryable === true;
}

function reasonOf(error: ActivityFailure | ApplicationFailure | TimeoutFailure): string {
  return error instanceof ActivityFailure ? (error.cause?.message ?? error.message) : error.message;
}
