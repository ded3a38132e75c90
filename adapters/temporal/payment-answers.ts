import type { InjectedSinks } from '@temporalio/worker';
import type { PaymentAnswerSinks } from '../../workflows/contract/payment-answers.ts';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';

/**
 * Where a gateway that hosts a worker picks up the first answers of the payments it started eagerly: the
 * workflow task of such a payment runs in this process, and its `paymentAnswers.answered` sink call lands here,
 * so the answer reaches the waiting request without a round trip through Temporal. Only a fast path: a payment
 * whose answer is found by another worker is answered through the `submit` update (payment-runner.ts).
 */
export class PaymentAnswerBoard {
  readonly #waiting = new Map<string, (result: SubmitResult | undefined) => void>();

  /**
   * Waits for the answer of the payment with this workflow id. Called before the payment starts, so an answer
   * found at once is not missed; `undefined` when the signal aborts first, or when the payment says its answer
   * will not be found here (then the caller asks the payment itself).
   */
  expect(workflowId: string, signal: AbortSignal): Promise<SubmitResult | undefined> {
    return new Promise((resolve) => {
      const stop = () => {
        if (this.#waiting.get(workflowId) === deliver) this.#waiting.delete(workflowId);
        resolve(undefined);
      };
      const deliver = (result: SubmitResult | undefined) => {
        this.#waiting.delete(workflowId);
        signal.removeEventListener('abort', stop);
        resolve(result);
      };
      if (signal.aborted) return resolve(undefined);
      this.#waiting.set(workflowId, deliver);
      signal.addEventListener('abort', stop, { once: true });
    });
  }

  /** An answer nobody here waits for (another process started the payment, or it was answered already) is dropped. */
  deliver(workflowId: string, result: SubmitResult): void {
    this.#waiting.get(workflowId)?.(result);
  }

  /** The payment's answer will come from a later workflow task, perhaps on another worker: its caller stops waiting here. */
  release(workflowId: string): void {
    this.#waiting.get(workflowId)?.(undefined);
  }
}

/**
 * The worker's side: every worker registers the sink (a payment calls it wherever it runs); a worker without a
 * board, or answers nobody waits for, drop it. Not called while a task replays history; a workflow task that runs
 * again after a failure calls it again, and the first call wins (the waiter is gone by the second).
 */
export function paymentAnswerSinks(board?: PaymentAnswerBoard): InjectedSinks<PaymentAnswerSinks> {
  return {
    paymentAnswers: {
      answered: { fn: (info, result) => board?.deliver(info.workflowId, result), callDuringReplay: false },
      answerComesLater: { fn: (info) => board?.release(info.workflowId), callDuringReplay: false },
    },
  };
}
