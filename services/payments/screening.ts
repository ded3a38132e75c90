import type { EntityManager } from '@mikro-orm/postgresql';
import type { CardNetwork } from '../../domain/catalog/product.ts';
import { findMerchantAccountByMid } from '../../data/queries/merchant-accounts.ts';
import { countRecentSubmits, findBlocklistHits, lockVelocitySubjects, recordSubmitAttempt } from '../../data/queries/screening.ts';
import { hasLiveSubscription } from '../../data/queries/subscriptions.ts';
import type { SubmitInfo } from '../../domain/payments/submit-result.ts';

export interface ScreeningInput {
  readonly tenantId: number;
  readonly productId: number;
  readonly email: string;
  readonly cardFingerprint: string;
  readonly bin: string;
  readonly binCountry?: string;
  readonly network: CardNetwork;
  readonly mid?: string;
  readonly velocity: { readonly cardSubmitLimit: number; readonly cardSubmitWindowSeconds: number; readonly emailSubmitLimit: number };
  readonly hasSubscriptionPlan: boolean;
}

export type Screening = { readonly ok: true; readonly forcedMerchantAccountId?: number } | { readonly ok: false; readonly info: SubmitInfo; readonly error: string };

/** E-mail velocity counts submits of the last 24 hours for the product. */
const EMAIL_WINDOW_SECONDS = 24 * 60 * 60;

/**
 * The database checks of a submit, after validation and before any money moves: the `mid` override (its
 * tenant; whether it may take the payment is decided with selection, in the payment), platform and tenant
 * blocklists, an existing subscription, and velocity limits. A submit that passes is recorded for later
 * velocity checks, in the same locked step as the count.
 */
export async function screenSubmit(em: EntityManager, input: ScreeningInput, now = new Date()): Promise<Screening> {
  let forcedMerchantAccountId: number | undefined;
  if (input.mid !== undefined && input.mid !== '') {
    const account = await findMerchantAccountByMid(em, input.mid);
    if (!account) return { ok: false, info: 'Failed', error: 'Specified Mid not found' };
    if (account.tenantId !== input.tenantId) return { ok: false, info: 'Failed', error: 'Specified Mid does not belong to Tenant account' };
    forcedMerchantAccountId = account.id;
  }

  const blocks = await findBlocklistHits(em, input);
  if (blocks.some((block) => block.platformWide)) return { ok: false, info: 'Failed', error: 'Blocked' };
  if (blocks.some((block) => block.kind !== 'bin_country')) return { ok: false, info: 'UserBlocked', error: 'Blocked' };
  if (blocks.length > 0) return { ok: false, info: 'UserBlocked', error: 'Blocked card' };

  // An early answer only: the payment claims the subscription under a unique index before charging.
  if (input.hasSubscriptionPlan && (await hasLiveSubscription(em, input))) return { ok: false, info: 'AlreadySubscribed', error: 'Already subscribed' };

  const limit = await em.transactional(async (tx) => {
    await lockVelocitySubjects(tx, input);
    const recent = await countRecentSubmits(tx, {
      ...input,
      cardSince: new Date(now.getTime() - input.velocity.cardSubmitWindowSeconds * 1000),
      emailSince: new Date(now.getTime() - EMAIL_WINDOW_SECONDS * 1000),
    });
    if (recent.byCard >= input.velocity.cardSubmitLimit) return 'CC entered too many times in quick succession';
    if (recent.byEmail >= input.velocity.emailSubmitLimit) return 'Email entered too many times for this product';
    await recordSubmitAttempt(tx, { ...input, at: now });
    return undefined;
  });
  if (limit) return { ok: false, info: 'LimitReached', error: limit };
  return { ok: true, forcedMerchantAccountId };
}
