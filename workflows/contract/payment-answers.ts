import type { Sinks } from '@temporalio/workflow';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';

/**
 * How a payment hands its first answer to a caller waiting in the same process (a gateway that hosts a worker
 * and started the payment eagerly, `adapters/temporal/payment-answers.ts`). A sink writes nothing to the
 * history, so it changes no replay; the `submit` update stays the way to the answer from anywhere else.
 */
export interface PaymentAnswerSinks extends Sinks {
  paymentAnswers: {
    /** The payment's first answer is known; the worker calls this after the workflow activation that found it. */
    answered(result: SubmitResult): void;
    /**
     * The answer waits on an ordinary activity (a status inquiry, a held authorization recorded, a void), whose
     * result may come back to any worker: a caller waiting in process asks the `submit` update instead.
     */
    answerComesLater(): void;
  };
}
