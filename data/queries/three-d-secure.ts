import type { EntityManager } from '@mikro-orm/postgresql';

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
