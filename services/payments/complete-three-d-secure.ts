import type { EntityManager } from '@mikro-orm/postgresql';
import { findThreeDSecurePayment } from '../../data/queries/three-d-secure.ts';
import { DomainError } from '../../domain/errors.ts';
import type { ThreeDSecureRequest } from '../../domain/payments/submit-request.schema.ts';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';
import type { ThreeDSecureRunner } from '../../domain/payments/payment-runner.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';

/**
 * `POST /api/{productId}/3ds`: finds the payment by its `threeDSecureId` within the tenant and product, checks
 * the session, and asks its workflow to finish the challenge. Before the cardholder answered the challenge,
 * 409 and nothing changes; once finished, the same final result (spec 2.3) every time it is asked.
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
  if (!order) throw unknownSession();
  // The order keeps a partnerSession of at most 50 characters; a payment with a longer one, or none, was issued a
  // serviceSession when it went Pending (see the payment workflow), so one of the two always matches. Every session
  // given must be the payment's: a serviceSession it was not issued, or a partnerSession other than the one it keeps,
  // contradicts the one that matches (a partnerSession it could not keep cannot be checked, and is not held against it).
  // An empty session is none (as above): an order that kept `serviceSession: ""` is not matched by another "".
  const { partnerSession, serviceSession } = input.body;
  const mismatch =
    !(partnerSession && partnerSession === order.partnerSession) && !(serviceSession && serviceSession === order.serviceSession)
      ? 'partnerSession'
      : partnerSession && order.partnerSession !== null && partnerSession !== order.partnerSession
        ? 'partnerSession'
        : serviceSession && serviceSession !== order.serviceSession
          ? 'serviceSession'
          : undefined;
  if (mismatch) throw new DomainError('validation', 'The session does not match the 3-D Secure payment', { field: mismatch });
  if (order.state === 'expired') throw expiredSession();

  const completion = await deps.runner.completeThreeDSecure({ workflowId: order.workflowId, threeDSecureId: input.body.threeDSecureId });
  switch (completion.kind) {
    case 'completed':
      // Voided while it waited (its final result says so, whether or not the order read above had been settled yet):
      // gone, as an expired one. One completed, held and voided after answers its result, the authorization's.
      if (completion.result.statusId === StatusId.VOIDED) throw voidedSession();
      return completion.result;
    case 'challenge_pending':
      throw new DomainError('conflict', 'The cardholder had not completed the 3-D Secure challenge when the processor was last asked (at most once a second); send the completion again');
    case 'processor_unavailable':
      throw new DomainError('unavailable', 'The processor did not answer the 3-D Secure completion; send it again');
    case 'voided':
      throw voidedSession();
    case 'expired':
      // A payment of an older worker says expired for a voided one too.
      throw order.state === 'voided' ? voidedSession() : expiredSession();
    case 'unknown':
      throw unknownSession();
    case 'forgotten':
      throw new DomainError('gone', 'This 3-D Secure payment finished too long ago for its result to be kept');
  }
}

const unknownSession = () => new DomainError('not_found', 'Unknown threeDSecureId');
const expiredSession = () => new DomainError('gone', 'This 3-D Secure session has expired');
const voidedSession = () => new DomainError('gone', 'This 3-D Secure payment was voided');
