import type { EntityManager } from '@mikro-orm/postgresql';
import type { OrderState } from '../../schema/entities/index.ts';

/** Where a payment waiting for 3-D Secure sends the cardholder, and whether it still waits. */
export interface ChallengeRedirect {
  readonly challengeUrl: string | null;
  readonly pending: boolean;
}

export async function findChallengeRedirect(em: EntityManager, threeDSecureId: string): Promise<ChallengeRedirect | undefined> {
  const [row] = await em.execute<{ challenge_url: string | null; state: string }[]>(
    `select challenge_url, state from orders where three_d_secure_id = ?`,
    [threeDSecureId],
  );
  return row && { challengeUrl: row.challenge_url, pending: row.state === 'pending_3ds' };
}

/** The submit order waiting on (or done with) a 3-D Secure challenge, as its completion needs it. */
export interface ThreeDSecurePayment {
  readonly workflowId: string;
  readonly state: OrderState;
  readonly partnerSession: string | null;
  readonly serviceSession: string | null;
}

/** The payment of a `threeDSecureId` within the tenant's product; another tenant's or product's is not found. */
export async function findThreeDSecurePayment(
  em: EntityManager,
  lookup: { threeDSecureId: string; tenantId: number; productId: number },
): Promise<ThreeDSecurePayment | undefined> {
  const [row] = await em.execute<{ workflow_id: string; state: OrderState; partner_session: string | null; service_session: string | null }[]>(
    `select workflow_id, state, partner_session, service_session from orders where three_d_secure_id = ? and tenant_id = ? and product_id = ?`,
    [lookup.threeDSecureId, lookup.tenantId, lookup.productId],
  );
  return row && { workflowId: row.workflow_id, state: row.state, partnerSession: row.partner_session, serviceSession: row.service_session };
}
