import pLimit from 'p-limit';
import { WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, TypedSearchAttributes } from '@temporalio/common';
import { PaymentNotStartedError, THREE_D_SECURE_REFUSALS, type PaymentRunner, type ThreeDSecureCompletion, type ThreeDSecureRefusal } from '../../domain/payments/payment-runner.ts';
import { persistedPartnerSession, type PaymentWorkflowInput } from '../../domain/payments/payment-input.ts';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';
import { DomainError } from '../../domain/errors.ts';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';
import { CustomerEmailAttribute, PartnerSessionAttribute, ProductIdAttribute, TenantIdAttribute } from '../../workflows/contract/search-attributes.ts';
import {
  THREE_D_SECURE_FINISHED,
  capturePaymentUpdate,
  completeThreeDSecureUpdate,
  paymentAnswersQuery,
  submitUpdate,
  supersedeChallengeUpdate,
  voidPaymentUpdate,
} from '../../workflows/contract/payment-updates.ts';
import type { paymentWorkflow } from '../../workflows/payment/payment.workflow.ts';
import type { PaymentAnswerBoard } from './payment-answers.ts';
import type { Logger } from '../../domain/logger.ts';
import { withinDeadline } from './call-deadline.ts';
import { isUpdateRefusedForFailingTask } from './outages.ts';

/**
 * A gateway that hosts a worker on the payments' task queue: `client` shares that worker's `NativeConnection`, so
 * a payment it starts with `requestEagerStart` has its first workflow task run in this process, without a trip
 * through Temporal's matching, and its answer comes through `board`. `waitMs` bounds that wait: an answer found by
 * another worker (this process's workflow task failed, or the payment waits on an ordinary activity) is then asked
 * for with the `submit` update, over the runner's own client (a `NativeConnection` ignores abort signals).
 */
export interface InProcessAnswers {
  readonly client: Client;
  readonly board: PaymentAnswerBoard;
  readonly waitMs: number;
  /**
   * Payments whose first step runs here at once; more wait in line, first come first served. The first step is CPU
   * work in this process (and the database's): past the cores, more at once only lengthen every one of them.
   */
  readonly atOnce: number;
  /** Each eager submit's timings at debug level: the start call, the wait for the answer, and whether it came in process. */
  readonly logger?: Logger;
}

/**
 * Runs payments as Temporal workflows, answering a submit as soon as the authorization outcome is known while
 * the workflow finishes the slow parts on its own. Two ways to start one:
 * - with `inProcess` (a gateway hosting a worker): an eager start, the answer handed over in process;
 * - without: one Update-With-Start round trip, the `submit` update returning the answer from whichever worker runs it.
 */
export function temporalPaymentRunner(options: { client: Client; taskQueue: string; answerTimeoutMs: number; callTimeoutMs?: number; inProcess?: InProcessAnswers }): PaymentRunner {
  const { client, inProcess, callTimeoutMs } = options;
  /**
   * Stops waiting (never the payment) when no worker answers in time, so callers get a 503, not a hang: the client's
   * calls are cancelled, and whatever else the call waits on is raced against the same deadline.
   */
  const bounded = async <T>(call: (signal: AbortSignal) => Promise<T>, retry = 'retry with the same Idempotency-Key to get its result'): Promise<T> => {
    const signal = AbortSignal.timeout(options.answerTimeoutMs);
    const unavailable = () => new DomainError('unavailable', `The payment is still being processed; ${retry}`);
    let stopRacing = () => {};
    const deadline = new Promise<never>((_, reject) => {
      const onAbort = () => reject(unavailable());
      signal.addEventListener('abort', onAbort, { once: true });
      stopRacing = () => signal.removeEventListener('abort', onAbort);
    });
    try {
      return await Promise.race([client.withAbortSignal(signal, () => call(signal)), deadline]);
    } catch (error) {
      if (signal.aborted) throw unavailable();
      // Temporal gave the update up when the workflow task holding it failed or timed out, its worker stalled: the
      // payment itself goes on, and is answered as one still being processed. (Update-With-Start throws the gRPC error
      // itself, not the client's `ServiceError`.)
      if (isUpdateRefusedForFailingTask(error)) throw unavailable();
      throw error;
    } finally {
      stopRacing();
    }
  };

  const startOptions = (input: PaymentWorkflowInput) => {
    // The session as the order keeps it (at most 50 characters): a longer one (up to 1,000 characters, 4,000 bytes)
    // can be over Temporal's 2 KB limit for a search attribute's value, which refuses the start.
    const partnerSession = persistedPartnerSession(input.order.partnerSession);
    return {
      workflowId: workflowIds.payment(input.tenantId, input.submitOrderId),
      taskQueue: options.taskQueue,
      args: [input] as [PaymentWorkflowInput],
      workflowIdConflictPolicy: 'USE_EXISTING' as const,
      // A closed payment is never run again under its id: a retry is answered from its stored first answer.
      workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
      typedSearchAttributes: new TypedSearchAttributes([
        { key: TenantIdAttribute, value: String(input.tenantId) },
        { key: ProductIdAttribute, value: String(input.productId) },
        { key: CustomerEmailAttribute, value: input.email },
        ...(partnerSession ? [{ key: PartnerSessionAttribute, value: partnerSession }] : []),
      ]),
    };
  };

  /**
   * Eager start: the board is watched before the payment starts, so an answer found at once is not missed. A
   * start the server did not make eager (no free slot here, eager start off on the server, an existing payment
   * under this id) runs wherever matching sends it, and is answered by the update.
   */
  const inLine = pLimit(inProcess?.atOnce ?? 1);
  const submitEagerly = (input: PaymentWorkflowInput, local: InProcessAnswers) => {
    const arrived = performance.now();
    const deadline = Date.now() + options.answerTimeoutMs;
    let sent = false;
    const onSend = () => (sent = true);
    return bounded((signal) => inLine(() => startEagerly(input, local, { signal, deadline, queuedMs: performance.now() - arrived, onSend }))).catch((error: unknown) => {
      // The caller's time ran out while the payment waited in line: its turn will find the signal aborted and never
      // start it, so it is "not started" (its velocity slot given back, no payment named), not "still processing".
      if (!sent && error instanceof DomainError && error.code === 'unavailable') throw new PaymentNotStartedError();
      throw error;
    });
  };

  /**
   * A payment whose turn came: started while at least half its caller's answer time is left. One that waited longer
   * in line is not started and its caller gets its 503 now, rather than a 503 its payment goes on after (a caller
   * without an Idempotency-Key that sent it again would pay twice); a retry with its key takes the claim over.
   */
  const startEagerly = async (input: PaymentWorkflowInput, local: InProcessAnswers, turn: { signal: AbortSignal; deadline: number; queuedMs: number; onSend: () => void }) => {
    const { signal, deadline } = turn;
    if (signal.aborted || deadline - Date.now() < options.answerTimeoutMs / 2) throw new PaymentNotStartedError();
    turn.onSend();
    const start = startOptions(input);
    const stopWatching = new AbortController();
    // At most half the answer time left in process, so the update always has its turn before the 503.
    const waitMs = Math.max(0, Math.floor(Math.min(local.waitMs, (deadline - Date.now()) / 2)));
    const answered = local.board.expect(start.workflowId, AbortSignal.any([signal, stopWatching.signal, AbortSignal.timeout(waitMs)]));
    try {
      const began = performance.now();
      // A deadline, not the abort signal: a NativeConnection ignores signals and would retry the start on its own.
      const handle = await local.client.withDeadline(deadline, () =>
        local.client.workflow.start<typeof paymentWorkflow>('paymentWorkflow', { ...start, requestEagerStart: true }),
      );
      const started = performance.now();
      const inProcessAnswer = handle.eagerlyStarted ? await answered : undefined;
      const answer = inProcessAnswer ?? (await firstAnswerOf(client.workflow.getHandle<typeof paymentWorkflow>(handle.workflowId)));
      local.logger?.debug(
        {
          workflowId: handle.workflowId,
          eagerlyStarted: handle.eagerlyStarted,
          answeredInProcess: inProcessAnswer !== undefined,
          queuedMs: roundedMs(turn.queuedMs),
          startMs: roundedMs(started - began),
          answerMs: roundedMs(performance.now() - started),
        },
        'payment answered',
      );
      return answer;
    } finally {
      stopWatching.abort();
    }
  };

  return {
    async submit(input) {
      if (inProcess) return submitEagerly(input, inProcess);
      const startWorkflowOperation = new WithStartWorkflowOperation<typeof paymentWorkflow>('paymentWorkflow', startOptions(input));
      return bounded(() => client.workflow.executeUpdateWithStart(submitUpdate, { startWorkflowOperation }));
    },

    async isStarting(tenantId, submitOrderId) {
      try {
        const payment = await withinDeadline(client, callTimeoutMs, () => client.workflow.getHandle(workflowIds.payment(tenantId, submitOrderId)).describe());
        // A closed workflow whose order was never written ended before it charged anything: no such payment.
        return payment.status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },

    async resume(tenantId, submitOrderId) {
      const handle = client.workflow.getHandle<typeof paymentWorkflow>(workflowIds.payment(tenantId, submitOrderId));
      try {
        return await bounded(() => firstAnswerOf(handle, { answeredLikely: true }));
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return undefined;
        throw error;
      }
    },

    /** A held authorization answers the `capture` or `void` update; a finished payment has nothing left to decide. */
    async decideAuthorization({ tenantId, submitOrderId, decision }) {
      const handle = client.workflow.getHandle<typeof paymentWorkflow>(workflowIds.payment(tenantId, submitOrderId));
      try {
        const decided = await bounded(() => handle.executeUpdate(decision === 'capture' ? capturePaymentUpdate : voidPaymentUpdate), 'send it again to get its result');
        return { kind: 'decided', ...decided };
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return { kind: 'not_found' };
        // Refused by the payment (NOT_AUTHORIZED), or it closed before answering: nothing waits for this decision.
        if (error instanceof WorkflowUpdateFailedError) return { kind: 'refused' };
        throw error;
      }
    },

    /**
     * Refused (no open challenge, or a worker of a version without the update), closed, or not settled within the answer
     * time: the payment keeps what it holds, and the caller is told so.
     */
    async supersedeChallenge({ tenantId, submitOrderId }) {
      const handle = client.workflow.getHandle<typeof paymentWorkflow>(workflowIds.payment(tenantId, submitOrderId));
      try {
        return await bounded(() => handle.executeUpdate(supersedeChallengeUpdate));
      } catch (error) {
        if (error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError) return 'not_waiting';
        if (error instanceof DomainError && error.code === 'unavailable') return 'not_waiting';
        throw error;
      }
    },

    /**
     * A running payment answers the `complete3ds` update (a refusal changes nothing); a finished one answers
     * with its final result, kept by Temporal for the namespace's retention period.
     */
    async completeThreeDSecure({ workflowId, threeDSecureId }): Promise<ThreeDSecureCompletion> {
      const handle = client.workflow.getHandle<typeof paymentWorkflow>(workflowId);
      // A repeat joins the completion under way (the workflow asks the processor once), so it is safe to send again.
      const again = 'send the 3-D Secure completion again to get its result';
      try {
        return { kind: 'completed', result: await bounded(() => handle.executeUpdate(completeThreeDSecureUpdate, { args: [{ threeDSecureId }] }), again) };
      } catch (error) {
        // Final already (a repeat while the payment holds its authorization, say): read it, adding nothing to the history.
        if (failureTypeOf(error) === THREE_D_SECURE_FINISHED) {
          const { final } = await bounded(() => handle.query(paymentAnswersQuery), again);
          if (final) return { kind: 'completed', result: final };
        }
        const refused = refusalOf(error);
        if (refused) return { kind: refused };
        // Not found: closed (or never there). Any other failed update: the payment closed before answering it.
        if (!(error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError)) throw error;
      }
      try {
        return { kind: 'completed', result: await bounded(() => finalResultOf(handle), again) };
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return { kind: 'forgotten' };
        throw error;
      }
    },
  };
}

const roundedMs = (duration: number) => Math.round(duration * 10) / 10;

/**
 * A finished payment's result, as its caller is answered: without what its end tells billing alone (`chargeUncertain`),
 * which no answer of the API has.
 */
async function finalResultOf(handle: WorkflowHandle<typeof paymentWorkflow>): Promise<SubmitResult> {
  const { chargeUncertain: _billingOnly, ...result } = await handle.result();
  return result;
}

/**
 * The answer of a payment: a running one answers the `submit` update (a repeat reads its final result once it has one,
 * else its first answer); a finished one's result is the answer.
 */
async function firstAnswerOf(handle: WorkflowHandle<typeof paymentWorkflow>, options: { answeredLikely: boolean } = { answeredLikely: false }): Promise<SubmitResult> {
  const { status } = await handle.describe();
  if (status.name !== 'RUNNING') return finalResultOf(handle);
  // A repeat of an answered payment (its Idempotency-Key sent again): read the answer, adding nothing to the payment's
  // history (each update is an event, and a run takes 2,000 at most). A worker without the query: the update, as before.
  if (options.answeredLikely) {
    const known = await handle.query(paymentAnswersQuery).catch(() => undefined);
    // Its final result once it has one (a challenge completed while the workflow still tells the tenant or starts billing).
    if (known?.final) return known.final;
    if (known?.first) return known.first;
  }
  try {
    return await handle.executeUpdate(submitUpdate);
  } catch (error) {
    // It closed between the two calls: its result is the answer.
    if (error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError) return finalResultOf(handle);
    throw error;
  }
}

/** The type of the failure a payment refused an update with. */
function failureTypeOf(error: unknown): string | undefined {
  if (!(error instanceof WorkflowUpdateFailedError) || !(error.cause instanceof ApplicationFailure)) return undefined;
  return error.cause.type ?? undefined;
}

/** The refusal a payment answered a completion with (the failure type the workflow set), if it was one. */
function refusalOf(error: unknown): ThreeDSecureRefusal | undefined {
  const type = failureTypeOf(error);
  return THREE_D_SECURE_REFUSALS.find((refusal) => refusal === type);
}
