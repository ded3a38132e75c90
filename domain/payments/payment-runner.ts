import type { PaymentWorkflowInput } from './payment-input.ts';
import type { SubmitResult } from './submit-result.ts';

/** How a 3-D Secure completion can end at the workflow. */
export type ThreeDSecureCompletion = { kind: 'completed'; result: SubmitResult } | { kind: 'already_completed' } | { kind: 'closed' };

export interface ThreeDSecureRunner {
  completeThreeDSecure(input: { workflowId: string; threeDSecureId: string }): Promise<ThreeDSecureCompletion>;
}

/** Runs a payment durably and answers with the submit result (port; the Temporal adapter implements it with Update-With-Start). */
export interface PaymentRunner extends ThreeDSecureRunner {
  submit(input: PaymentWorkflowInput): Promise<SubmitResult>;
  /** The first answer of an existing payment; undefined when no such payment was started. */
  resume(tenantId: number, submitOrderId: number): Promise<SubmitResult | undefined>;
}
