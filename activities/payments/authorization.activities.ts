import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/common';
import type { AuthorizationOutcome, ProcessorGateway, ProcessorResult } from '../../adapters/processors/processor-gateway.ts';
import { recordVoid } from '../../data/queries/authorization-holds.ts';
import { findSealedCredentials } from '../../data/queries/merchant-accounts.ts';
import { findRecordedAttempt, recordAttempt, type RecordedAttemptOutcome } from '../../data/queries/transactions.ts';
import { poolExecutor } from '../../data/sql-executor.ts';
import { runGivenUp } from '../shared/run-given-up.ts';
import type { CardVault, SealedCard } from '../../domain/crypto/card-vault.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import type { Logger } from '../../domain/logger.ts';
import {
  ATTEMPT_NOT_RECORDED,
  attemptReference,
  type AttemptOutcome,
  type AttemptResult,
  type ChallengeCompletion,
  storableExchange,
  type MerchantCandidate,
  type UnrecordedAttempt,
} from '../../domain/payments/attempts.ts';
import type { CardSummary } from '../../domain/payments/payment-input.ts';
import { statusById, statusNameOf } from '../../domain/statuses/status-codes.ts';
import { permanentFailureOf, processorFailure, withPermanentFailures } from '../shared/permanent-failures.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';

export interface AuthorizationActivityDeps {
  readonly orm: MikroORM;
  readonly logger: Logger;
  readonly secretBox: SecretBox;
  readonly cardVault: CardVault;
  readonly processors: { get(name: string): ProcessorGateway; names(): string[] };
}

interface AttemptContext {
  readonly tenantId: number;
  readonly productId: number;
  readonly submitOrderId: number;
  readonly attemptNumber: number;
  readonly candidate: MerchantCandidate;
  readonly amount: string;
  readonly currency: string;
  readonly email: string;
  readonly card: CardSummary;
  readonly partnerSession?: string;
  readonly firstName?: string;
  readonly lastName?: string;
}

/** One authorization to send: the attempt, the sealed card and how to send it. */
export type AuthorizationRequest = AttemptContext & { sealedCard: string; threeDSecure: boolean; timeoutMs: number; capture?: boolean };

/** The gateway's reason for a 3-D Secure completion asked before the cardholder answered the challenge. */
const CHALLENGE_PENDING = 'challenge pending';

/** The processor exchanges of a payment (authorize, inquire, 3-D Secure, void), each attempt recorded as a transaction. */
export function createAuthorizationActivities(deps: AuthorizationActivityDeps) {
  const fork = (): EntityManager => deps.orm.em.fork() as EntityManager;
  // Single statements (the attempt's record) go to the ORM's pool as prepared statements, planned once per connection.
  const sql = poolExecutor(deps.orm);

  /**
   * One authorization on one merchant account; the attempt is recorded whatever the answer. `orderIsNew`: the caller
   * created the order just now and reserved this account itself, so no attempt of it was recorded before, and one
   * recorded meanwhile by a run beside this one is on this same account (the processor sees the same reference twice;
   * the record keeps the first final answer, which this run then answers with).
   */
  async function authorizeAttempt(input: AuthorizationRequest, orderIsNew = false): Promise<AttemptResult> {
    const reference = attemptReference(input.submitOrderId, input.attemptNumber);
    // Run again after a crash, an attempt whose outcome is recorded answers with it: the caller may have had it.
    const recorded = orderIsNew ? undefined : await findRecordedAttempt(fork(), reference);
    if (recorded && recorded.merchantAccountId !== input.candidate.merchantAccountId) {
      // Never happens by design (the account of a recorded attempt is chosen again); sending it would authorize twice.
      throw ApplicationFailure.nonRetryable(`Attempt ${reference} was recorded on another merchant account`, 'AttemptAccountMismatch');
    }
    if (recorded && isSettledOutcome(recorded)) return recordedResult(reference, recorded);
    const card = await deps.cardVault.open(input.sealedCard as SealedCard);
    const credentials = await credentialsFor(input.candidate.merchantAccountId, input.currency);
    if (!deps.processors.names().includes(input.candidate.gateway)) {
      // A merchant account naming a processor this deployment has no adapter for: nothing was sent, so
      // the outcome is known (a configuration decline), not something to retry or inquire about.
      const response = `No adapter is configured for gateway "${input.candidate.gateway}"`;
      deps.logger.error({ merchantAccountId: input.candidate.merchantAccountId, gateway: input.candidate.gateway }, response);
      return record(input, reference, { outcome: { kind: 'declined', statusId: StatusId.PROCESSOR_CONFIGURATION_INVALID, message: response }, exchange: { gateway: input.candidate.gateway, httpStatus: 0, response } });
    }
    // A run Temporal gave up goes on beside the run that replaces it: only that one may send the attempt.
    if (runGivenUp()) throw ApplicationFailure.retryable(`Attempt ${reference} not sent: its run was given up`, 'RunGivenUp');
    const processor = deps.processors.get(input.candidate.gateway);
    // The attempt is `sent` now, however long the processor takes to answer (the mitigation search's date filters).
    const sentAt = new Date();
    const result = await processor.authorize(
      {
        reference,
        orderReference: `ord${input.submitOrderId}`,
        merchantId: input.candidate.mid,
        amount: input.amount,
        currency: input.currency,
        // A rebill's stored card has no CVV: it is sent without one, as a merchant-initiated transaction (a card kept for
        // rebills, never a checkout's whose security code's key is gone: `kept`).
        card: { number: card.pan, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, cvv: card.cvv || undefined, holderName: card.holderName },
        threeDSecure: input.threeDSecure,
        credentials,
        ...(input.capture === false ? { capture: false } : {}),
        ...(card.kept ? { merchantInitiated: true } : {}),
      },
      input.timeoutMs,
    );
    return record(input, reference, result, undefined, sentAt);
  }

  /** An attempt declined before reaching the processor (a forced account that cannot take the payment), recorded with its status. */
  async function recordUnsentAttempt(input: AttemptContext & { statusId: number }): Promise<AttemptResult> {
    const reference = attemptReference(input.submitOrderId, input.attemptNumber);
    const response = `Not sent: ${statusById(input.statusId)?.status ?? 'merchant account not eligible'}`;
    return record(input, reference, { outcome: { kind: 'declined', statusId: input.statusId, message: response }, exchange: { gateway: input.candidate.gateway, httpStatus: 0, response } });
  }

  /** Asks the processor what happened to an attempt whose answer was lost. */
  async function inquireAttempt(input: AttemptContext & { timeoutMs: number }): Promise<AttemptResult> {
    const reference = attemptReference(input.submitOrderId, input.attemptNumber);
    const result = await deps.processors.get(input.candidate.gateway).inquire(reference, input.timeoutMs);
    if (result.outcome === null) return record(input, reference, { outcome: { kind: 'declined', statusId: 0, message: 'not_found' }, exchange: result.exchange }, { kind: 'not_found' });
    if (result.outcome.kind === 'unknown') throw processorFailure(`Status inquiry of ${reference} failed: ${result.outcome.reason}`, result.exchange);
    return record(input, reference, result as ProcessorResult<AuthorizationOutcome>);
  }

  /**
   * Finishes a 3-D Secure challenge at the processor. While the cardholder has not answered it, the processor
   * says so and nothing is recorded: the challenge simply stays open.
   */
  async function completeThreeDSecure(
    input: AttemptContext & { processorTransactionId: string; proceedWithoutAuthentication: boolean; timeoutMs: number },
  ): Promise<ChallengeCompletion> {
    const reference = attemptReference(input.submitOrderId, input.attemptNumber);
    const result = await deps.processors.get(input.candidate.gateway).complete3ds(input.processorTransactionId, input.proceedWithoutAuthentication, input.timeoutMs);
    if (result.outcome.kind === 'unknown') {
      if (result.outcome.reason === CHALLENGE_PENDING) return { finished: false };
      throw processorFailure(`3-D Secure completion of ${reference} failed: ${result.outcome.reason}`, result.exchange);
    }
    return { finished: true, attempt: await record(input, reference, result) };
  }

  /**
   * Voids an authorization that must not be captured (an expired 3-D Secure wait, an approval of a payment that then
   * failed). `recorded`: the approval's transaction, shown voided once the processor voided it (a `void` transaction
   * refers to it, nothing of it refundable, its room on the monthly cap given back).
   */
  async function voidAuthorization(input: {
    gateway: string;
    processorTransactionId: string;
    timeoutMs: number;
    recorded?: { submitOrderId: number; transactionId: string };
  }): Promise<boolean> {
    const result = await deps.processors.get(input.gateway).void(input.processorTransactionId, input.timeoutMs);
    const recorded = input.recorded;
    if (result.outcome.voided && recorded) {
      const voided = { id: StatusId.VOIDED, name: statusNameOf(StatusId.VOIDED) };
      // Best effort: this runs on a payment's failure path, often because the database is away, and a retry of the
      // activity would only void again; the approval then stays as recorded (an operator finds it in the log).
      await fork()
        .transactional((tx) =>
          recordVoid(tx, { orderId: recorded.submitOrderId, transactionId: recorded.transactionId, voided: true, statusId: voided.id, status: voided.name, exchange: result.exchange }),
        )
        .catch((error: unknown) => deps.logger.error({ submitOrderId: recorded.submitOrderId, transactionId: recorded.transactionId, err: error }, 'approval voided at the processor but not recorded'));
    }
    return result.outcome.voided;
  }

  async function credentialsFor(merchantAccountId: number, currency: string): Promise<Record<string, string>> {
    const sealed = await findSealedCredentials(sql, merchantAccountId, currency);
    return sealed ? (JSON.parse(deps.secretBox.open(sealed)) as Record<string, string>) : {};
  }

  /**
   * Records the attempt (once, however often the activity runs) and ends its cap reservation when the outcome is
   * known: a first approval moves the amount into the month's approved volume, a decline releases it. One round trip.
   * `sentAt`: when the authorization went to the processor (its first recording keeps it; the recording's time when
   * nothing was sent, or the sending was not this run's).
   */
  async function record(input: AttemptContext, reference: string, result: ProcessorResult<AuthorizationOutcome>, override?: AttemptOutcome, sentAt?: Date): Promise<AttemptResult> {
    const outcome: AttemptOutcome = override ?? toAttemptOutcome(result.outcome);
    // Until they settle, an attempt waiting on 3-D Secure is recorded as submitted, one with no answer yet as a timeout.
    const statusId = outcome.kind === 'approved' || outcome.kind === 'declined' ? outcome.statusId : outcome.kind === 'challenge' ? StatusId.SUBMITTED : StatusId.SYSTEM_TIMEOUT;
    const approved = outcome.kind === 'approved';
    const recorded = await recordAttempt(sql, {
      submitOrderId: input.submitOrderId,
      reference,
      attemptNumber: input.attemptNumber,
      merchantAccount: input.candidate,
      processorTransactionId: 'processorTransactionId' in outcome ? (outcome.processorTransactionId ?? null) : null,
      statusId,
      status: statusNameOf(statusId),
      approved,
      authCode: approved ? outcome.authCode : null,
      eci: approved ? (outcome.eci ?? null) : null,
      amount: input.amount,
      currency: input.currency,
      email: input.email,
      firstName: input.firstName,
      lastName: input.lastName,
      card: input.card,
      sandbox: input.candidate.gateway === 'sandbox',
      exchange: storableExchange(result.exchange),
      sentAt,
      completedAt: outcome.kind === 'challenge' || outcome.kind === 'unknown' ? null : new Date(),
      // A known answer ends the attempt's reservation: an approval turns it into approved volume, a decline frees it.
      final: outcome.kind === 'approved' || outcome.kind === 'declined',
    }).catch((error: unknown) => {
      throw unrecordedAttempt(error, reference, outcome, input.candidate.gateway);
    });
    if (recorded.alreadySettled) {
      // Another run of this step recorded the processor's final word first: that is the attempt's answer.
      const settled = await findRecordedAttempt(fork(), reference);
      deps.logger.info({ reference, outcome: outcome.kind, recordedApproved: settled!.approved }, 'authorization attempt already settled by another run');
      return recordedResult(reference, settled!);
    }
    deps.logger.info({ reference, outcome: outcome.kind, statusId, gateway: input.candidate.gateway }, 'authorization attempt');
    return { reference, transactionId: recorded.transactionId, outcome, exchange: result.exchange };
  }

  return withPermanentFailures({ authorizeAttempt, recordUnsentAttempt, inquireAttempt, completeThreeDSecure, voidAuthorization });
}

/**
 * An attempt's record refused for good (see `ATTEMPT_NOT_RECORDED`), saying what the processor holds under it; any other
 * failure is returned as it is, for the activity's retries.
 */
function unrecordedAttempt(error: unknown, reference: string, outcome: AttemptOutcome, gateway: string): unknown {
  const permanent = permanentFailureOf(error);
  // An answer lost (unknown) is asked about: the inquiry's answer, refused in turn, then says what to void.
  if (!(permanent instanceof ApplicationFailure) || !permanent.nonRetryable || outcome.kind === 'unknown') return permanent;
  const held = (outcome.kind === 'approved' || outcome.kind === 'challenge') && outcome.processorTransactionId ? outcome.processorTransactionId : undefined;
  const details: UnrecordedAttempt = {
    ...(permanent.details?.[0] as { sqlState?: string } | undefined),
    ...(held ? { authorized: { gateway, processorTransactionId: held } } : {}),
  };
  return ApplicationFailure.nonRetryable(`Attempt ${reference} could not be recorded: ${permanent.message}`, ATTEMPT_NOT_RECORDED, details);
}

/**
 * Whether a recorded attempt has the processor's final word: approved, or declined with a status the processor
 * gave. An open challenge, an unknown answer and an attempt the processor never saw are sent (again) as before.
 */
function isSettledOutcome(recorded: RecordedAttemptOutcome): boolean {
  return recorded.approved || (recorded.completedAt !== null && recorded.statusId !== StatusId.SYSTEM_TIMEOUT);
}

/** The attempt as recorded, in the shape the processor's answer had when it was recorded. */
function recordedResult(reference: string, recorded: RecordedAttemptOutcome): AttemptResult {
  const processorTransactionId = recorded.processorTransactionId ?? undefined;
  const outcome: AttemptOutcome = recorded.approved
    ? { kind: 'approved', statusId: recorded.statusId, processorTransactionId: processorTransactionId!, authCode: recorded.authCode ?? '', ...(recorded.eci ? { eci: recorded.eci } : {}) }
    : { kind: 'declined', statusId: recorded.statusId, processorTransactionId };
  return { reference, transactionId: recorded.transactionId, outcome, exchange: recorded.exchange };
}

function toAttemptOutcome(outcome: AuthorizationOutcome): AttemptOutcome {
  switch (outcome.kind) {
    case 'approved':
      return { kind: 'approved', statusId: outcome.statusId, processorTransactionId: outcome.processorTransactionId, authCode: outcome.authCode, eci: outcome.eci };
    case 'declined':
      return { kind: 'declined', statusId: outcome.statusId, processorTransactionId: outcome.processorTransactionId };
    case 'challenge':
      return { kind: 'challenge', processorTransactionId: outcome.processorTransactionId, challengeUrl: outcome.challengeUrl, redirect: outcome.redirect };
    case 'unknown':
      return { kind: 'unknown', reason: outcome.reason };
  }
}
