import type { EntityManager } from '@mikro-orm/postgresql';
import { findThreeDSecurePayment } from '../../data/queries/three-d-secure.ts';
import { DomainError } from '../../domain/errors.ts';
import type { ThreeDSecureRequest } from '../../domain/payments/submit-request.schema.ts';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';
import type { ThreeDSecureRunner } from '../../domain/payments/payment-runner.ts';

/**
 * `POST /api/{productId}/3ds`: finds the pending payment by its `threeDSecureId` within the tenant and
 * product, and hands the completion to its workflow, which answers with the final result.
 */
export async function completeThreeDSecure(
  deps: { em: EntityManager; runner: ThreeDSecureRunner },
  input: { tenantId: number; productId: string; body: ThreeDSecureRequest },
): Promise<SubmitResult> {
  if (!input.body.serviceSession && !input.body.partnerSession) {
    throw new DomainError('validation', 'Either serviceSession or partnerSession is required', { field: 'partnerSession' });
  }
  const productId = /^\d{1,9}$/.test(input.productId) ? Number(input.productId) : NaN;
  const order = Number.isNaN(productId)
    ? undefined
    : await findThreeDSecurePayment(deps.em, { threeDSecureId: input.body.threeDSecureId, tenantId: input.tenantId, productId });
  if (!order) throw new DomainError('not_found', 'Unknown threeDSecureId');
  const sessionMatches =
    (input.body.partnerSession !== undefined && input.body.partnerSession === order.partnerSession) ||
    (input.body.serviceSession !== undefined && input.body.serviceSession === order.serviceSession);
  if (!sessionMatches) throw new DomainError('validation', 'The session does not match the 3-D Secure payment', { field: 'partnerSession' });
  if (order.state === 'expired') throw new DomainError('gone', 'This 3-D Secure session has expired');
  if (order.state !== 'pending_3ds') throw new DomainError('conflict', 'This 3-D Secure session was already completed');

  const completion = await deps.runner.completeThreeDSecure({ workflowId: order.workflowId, threeDSecureId: input.body.threeDSecureId });
  switch (completion.kind) {
    case 'completed':
      return completion.result;
    case 'already_completed':
      throw new DomainError('conflict', 'This 3-D Secure session was already completed');
    case 'closed':
      throw new DomainError('gone', 'This 3-D Secure session has expired');
  }
}
