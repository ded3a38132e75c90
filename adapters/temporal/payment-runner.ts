import { WithStartWorkflowOperation, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure, TypedSearchAttributes } from '@temporalio/common';
import { THREE_D_SECURE_REFUSALS, type PaymentRunner, type ThreeDSecureCompletion, type ThreeDSecureRefusal } from '../../domain/payments/payment-runner.ts';
import { DomainError } from '../../domain/errors.ts';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';
import { CustomerEmailAttribute, PartnerSessionAttribute, ProductIdAttribute, TenantIdAttribute } from '../../workflows/contract/search-attributes.ts';
import { capturePaymentUpdate, completeThreeDSecureUpdate, submitUpdate, voidPaymentUpdate } from '../../workflows/contract/payment-updates.ts';
import type { paymentWorkflow } from '../../workflows/payment/payment.workflow.ts';

/**
 * Runs payments as Temporal workflows. A submit is one Update-With-Start round trip: the workflow
 * starts (or, for a retried idempotency key, is found) and the `submit` update returns as soon as the
 * authorization outcome is known, while the workflow finishes the slow parts on its own.
 */
export function temporalPaymentRunner(options: { client: Client; taskQueue: string; answerTimeoutMs: number }): PaymentRunner {
  const { client } = options;
  /** Stops waiting (never the payment) when no worker answers in time, so callers get a 503, not a hang. */
  const bounded = async <T>(call: () => Promise<T>, retry = 'retry with the same Idempotency-Key to get its result'): Promise<T> => {
    const signal = AbortSignal.timeout(options.answerTimeoutMs);
    try {
      return await client.withAbortSignal(signal, call);
    } catch (error) {
      if (signal.aborted) throw new DomainError('unavailable', `The payment is still being processed; ${retry}`);
      throw error;
    }
  };
  return {
    async submit(input) {
      const startWorkflowOperation = new WithStartWorkflowOperation<typeof paymentWorkflow>('paymentWorkflow', {
        workflowId: workflowIds.payment(input.tenantId, input.submitOrderId),
        taskQueue: options.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        // A closed payment is never run again under its id: a retry is answered from its stored first answer.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: new TypedSearchAttributes([
          { key: TenantIdAttribute, value: String(input.tenantId) },
          { key: ProductIdAttribute, value: String(input.productId) },
          { key: CustomerEmailAttribute, value: input.email },
          ...(input.order.partnerSession ? [{ key: PartnerSessionAttribute, value: input.order.partnerSession }] : []),
        ]),
      });
      return bounded(() => client.workflow.executeUpdateWithStart(submitUpdate, { startWorkflowOperation }));
    },

    async resume(tenantId, submitOrderId) {
      const handle = client.workflow.getHandle<typeof paymentWorkflow>(workflowIds.payment(tenantId, submitOrderId));
      try {
        const { status } = await handle.describe();
        // A finished payment no longer takes updates; its result is the answer.
        return await bounded(() => (status.name === 'RUNNING' ? handle.executeUpdate(submitUpdate) : handle.result()));
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
        const refused = refusalOf(error);
        if (refused) return { kind: refused };
        // Not found: closed (or never there). Any other failed update: the payment closed before answering it.
        if (!(error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError)) throw error;
      }
      try {
        return { kind: 'completed', result: await bounded(() => handle.result(), again) };
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return { kind: 'forgotten' };
        throw error;
      }
    },
  };
}

/** The refusal a payment answered a completion with (the failure type the workflow set), if it was one. */
function refusalOf(error: unknown): ThreeDSecureRefusal | undefined {
  if (!(error instanceof WorkflowUpdateFailedError) || !(error.cause instanceof ApplicationFailure)) return undefined;
  const type = error.cause.type;
  return THREE_D_SECURE_REFUSALS.find((refusal) => refusal === type);
}
