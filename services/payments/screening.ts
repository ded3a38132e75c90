import type { EntityManager } from '@mikro-orm/postgresql';
import type { CardNetwork } from '../../domain/catalog/product.ts';
import { DomainError } from '../../domain/errors.ts';
import { findMerchantAccountByMid } from '../../data/queries/merchant-accounts.ts';
import { releaseSubmitAttempt, screenSubmitInDatabase, type SubmitScreening } from '../../data/queries/screening.ts';
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
  readonly hasSubscriptionPlan: boolean;
  /** The submit has no order id yet: a submit that passes gets one from the same round trip. */
  readonly reserveOrderId: boolean;
}

/** A submit that passed: its velocity slot is recorded at `screenedAt`. */
export interface PassedScreening {
  readonly ok: true;
  readonly forcedMerchantAccountId?: number;
  /** When `reserveOrderId` asked for one. */
  readonly submitOrderId?: number;
  /** The time its velocity slot was recorded under: what `releaseScreenedSlot` gives back. */
  readonly screenedAt: Date;
}

export type Screening = PassedScreening | { readonly ok: false; readonly info: SubmitInfo; readonly error: string };

/** E-mail velocity counts submits of the last 24 hours for the product. */
const EMAIL_WINDOW_SECONDS = 24 * 60 * 60;

/**
 * The database checks of a submit, after validation and before any money moves: the `mid` override (its
 * tenant; whether it may take the payment is decided with selection, in the payment), then in one round trip
 * (`screenSubmitInDatabase`) platform and tenant blocklists, an existing subscription, and velocity limits.
 * A submit that passes is recorded for later velocity counts, in the same locked step as the count; the limits
 * are the product's as committed at that moment (never a cached copy).
 */
export async function screenSubmit(em: EntityManager, input: ScreeningInput, now = new Date()): Promise<Screening> {
  let forcedMerchantAccountId: number | undefined;
  if (input.mid !== undefined && input.mid !== '') {
    const account = await findMerchantAccountByMid(em, input.mid);
    if (!account) return { ok: false, info: 'Failed', error: 'Specified Mid not found' };
    if (account.tenantId !== input.tenantId) return { ok: false, info: 'Failed', error: 'Specified Mid does not belong to Tenant account' };
    forcedMerchantAccountId = account.id;
  }

  const found = await screenSubmitInDatabase(em, {
    ...input,
    // An early answer only: the payment claims the subscription under a unique index before charging.
    checkSubscription: input.hasSubscriptionPlan,
    emailWindowSeconds: EMAIL_WINDOW_SECONDS,
    now,
  });
  const refusal = refusalOf(found);
  if (refusal) return refusal;
  if (found.productMissing) throw new DomainError('not_found', `Product ${input.productId} not found`);
  return { ok: true, forcedMerchantAccountId, ...(found.orderId === undefined ? {} : { submitOrderId: found.orderId }), screenedAt: now };
}

/**
 * Gives back the velocity slot a passed screening recorded, for a submit whose payment was certainly not started (a
 * customer must not be refused for a submit the gateway never ran).
 */
export async function releaseScreenedSlot(em: EntityManager, input: ScreeningInput, passed: PassedScreening): Promise<void> {
  await releaseSubmitAttempt(em, { tenantId: input.tenantId, productId: input.productId, email: input.email, cardFingerprint: input.cardFingerprint, now: passed.screenedAt });
}

/** The answer a screening finding gives, in the order the checks run; undefined when the submit passed. */
function refusalOf(found: SubmitScreening): Exclude<Screening, { ok: true }> | undefined {
  const { blocks } = found;
  // Spec 7.1: at platform level the card itself is `Blocked Card`; any other platform block is `Blocked`.
  if (blocks.some((block) => block.platformWide && block.kind === 'card')) return { ok: false, info: 'Failed', error: 'Blocked Card' };
  if (blocks.some((block) => block.platformWide)) return { ok: false, info: 'Failed', error: 'Blocked' };
  if (blocks.some((block) => block.kind !== 'bin_country')) return { ok: false, info: 'UserBlocked', error: 'Blocked' };
  if (blocks.length > 0) return { ok: false, info: 'UserBlocked', error: 'Blocked card' };
  if (found.subscribed) return { ok: false, info: 'AlreadySubscribed', error: 'Already subscribed' };

  const velocity = found.velocity;
  if (!velocity || velocity.recorded) return undefined;
  if (velocity.recent.byCard >= velocity.limits.card) return { ok: false, info: 'LimitReached', error: 'CC entered too many times in quick succession' };
  if (velocity.recent.byEmail >= velocity.limits.email) return { ok: false, info: 'LimitReached', error: 'Email entered too many times for this product' };
  // Not recorded, yet under both limits: the database and this rule disagree, which must never pass silently.
  throw new Error('screen_submit did not record a submit under both velocity limits');
}
