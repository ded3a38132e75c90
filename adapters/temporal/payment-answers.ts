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
  readonly #waiting = new Map<string, (result: SubmitResult) => void>();

  /**
   * Waits for the answer of the payment with this workflow id. Called before the payment starts, so an answer
   * found at once is not missed; `undefined` when the signal aborts first.
   */
  expect(workflowId: string, signal: AbortSignal): Promise<SubmitResult | undefined> {
    return new Promise((resolve) => {
      const stop = () => {
        if (this.#waiting.get(workflowId) === deliver) this.#waiting.delete(workflowId);
        resolve(undefined);
      };
      const deliver = (result: SubmitResult) => {
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

  /** Requests waiting (for the stop and for tests). */
  get size(): number {
    return this.#waiting.size;
  }
}

/**
 * The worker's side: every worker registers the sink (a payment calls it wherever it runs); a worker without a
 * board, or answers nobody waits for, drop it. Never called on replay, so an answer is delivered once per run.
 */
export function paymentAnswerSinks(board?: PaymentAnswerBoard): InjectedSinks<PaymentAnswerSinks> {
  return {
    paymentAnswers: {
      answered: { fn: (info, result) => board?.deliver(info.workflowId, result), callDuringReplay: false },
    },
  };
}
