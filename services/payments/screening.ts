import type { EntityManager } from '@mikro-orm/postgresql';
import { findMerchantAccountByMid } from '../../data/queries/merchant-accounts.ts';
import { countRecentSubmits, findBlocklistHits, recordSubmitAttempt } from '../../data/queries/screening.ts';
import { hasLiveSubscription } from '../../data/queries/subscriptions.ts';
import type { CardNetwork } from '../../domain/catalog/product.ts';
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
 * The database checks of a submit, after validation and before any money moves: the `mid` override,
 * platform and tenant blocklists, an existing subscription, and velocity limits. A submit that passes
 * is recorded for later velocity checks.
 */
export async function screenSubmit(em: EntityManager, input: ScreeningInput, now = new Date()): Promise<Screening> {
  let forcedMerchantAccountId: number | undefined;
  if (input.mid !== undefined && input.mid !== '') {
    const account = await findMerchantAccountByMid(em, input.mid);
    if (!account) return { ok: false, info: 'Failed', error: 'Specified Mid not found' };
    if (account.tenantId !== input.tenantId) return { ok: false, info: 'Failed', error: 'Specified Mid does not belong to Tenant account' };
    if (account.disabledNetworks.includes(input.network)) return { ok: false, info: 'Failed', error: `${input.network} cards not supported` };
    forcedMerchantAccountId = account.id;
  }

  const blocks = await findBlocklistHits(em, input);
  if (blocks.some((block) => block.platformWide)) return { ok: false, info: 'Failed', error: 'Blocked' };
  if (blocks.some((block) => block.kind !== 'bin_country')) return { ok: false, info: 'UserBlocked', error: 'Blocked' };
  if (blocks.length > 0) return { ok: false, info: 'UserBlocked', error: 'Blocked card' };

  if (input.hasSubscriptionPlan && (await hasLiveSubscription(em, input))) return { ok: false, info: 'AlreadySubscribed', error: 'Already subscribed' };

  const recent = await countRecentSubmits(em, {
    ...input,
    cardSince: new Date(now.getTime() - input.velocity.cardSubmitWindowSeconds * 1000),
    emailSince: new Date(now.getTime() - EMAIL_WINDOW_SECONDS * 1000),
  });
  if (recent.byCard >= input.velocity.cardSubmitLimit) return { ok: false, info: 'LimitReached', error: 'CC entered too many times in quick succession' };
  if (recent.byEmail >= input.velocity.emailSubmitLimit) return { ok: false, info: 'LimitReached', error: 'Email entered too many times for this product' };

  await recordSubmitAttempt(em, { ...input, at: now });
  return { ok: true, forcedMerchantAccountId };
}
