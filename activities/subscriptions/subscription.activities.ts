import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { cancelSubscription, findRebillSubject, openRebill, rebillMayHaveCharged as orderMayHaveCharged, recordRebillOutcome, setSubscriptionPaused, storeRebillCard } from '../../data/queries/rebills.ts';
import type { CardVault, SealedCard } from '../../domain/crypto/card-vault.ts';
import type { SubscriptionPlan } from '../../domain/catalog/product.ts';
import type { CardSummary } from '../../domain/payments/payment-input.ts';
import { issuerPrefixOf, shownCardDigits } from '../../domain/payments/pre-validation.ts';
import { isBlocklisted } from '../../data/queries/screening.ts';
import { recordWebhookDeliveries, type RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';
import type { PauseReason } from '../../domain/subscriptions/pause-reason.ts';
import type { SubscriptionEventType } from '../../domain/webhooks/events.ts';

export interface SubscriptionActivityDeps {
  readonly orm: MikroORM;
  readonly cardVault: CardVault;
}

/** One charge to make, or why there is none (the subscription ended meanwhile, or has no card). */
export type RebillPlan =
  | {
      readonly kind: 'charge';
      readonly orderId: number;
      readonly tenantId: number;
      readonly productId: number;
      readonly email: string;
      readonly amount: string;
      readonly currency: string;
      readonly sealedCard: string;
      readonly card: CardSummary;
      /** Period 0 only (the checkout's own charge retried): the checkout's session, so its lead is paid by this charge. */
      readonly partnerSession?: string;
    }
  /**
   * Nothing to charge: the subscription is cancelled (`cancelReason`: the reason one cancelled directly, while no
   * billing ran, was given), has no card, or its card or e-mail was blocklisted since the checkout.
   */
  | { readonly kind: 'none'; readonly reason: 'cancelled' | 'no_card' | 'blocked'; readonly cancelReason?: string };

/** The subscription's side of recurring billing: its stored card, each rebill's order, outcomes and webhooks. */
export function createSubscriptionActivities(deps: SubscriptionActivityDeps) {
  const fork = (): EntityManager => deps.orm.em.fork() as EntityManager;

  /** Keeps the first payment's card for rebills, sealed again without its CVV (which is never stored). */
  async function keepCardForRebills(input: { subscriptionId: number; sealedCard: string }): Promise<void> {
    const card = await deps.cardVault.open(input.sealedCard as SealedCard);
    await storeRebillCard(fork(), input.subscriptionId, await deps.cardVault.seal({ ...card, cvv: '' }));
  }

  /** The plan and billed periods the subscription workflow starts from. */
  async function loadSubscription(input: { subscriptionId: number }): Promise<{ plan: SubscriptionPlan | null; billedPeriods: number; state: string; paused: boolean; tenantId: number }> {
    const subject = await findRebillSubject(fork(), input.subscriptionId);
    if (!subject) return { plan: null, billedPeriods: 0, state: 'cancelled', paused: false, tenantId: 0 };
    return { plan: subject.plan, billedPeriods: subject.billedPeriods, state: subject.state, paused: subject.paused, tenantId: subject.tenantId };
  }

  /** The order a period's charge runs under (the same however often asked) and what the payment needs. */
  async function prepareRebill(input: { subscriptionId: number; period: number; attempt: number }): Promise<RebillPlan> {
    const em = fork();
    const subject = await findRebillSubject(em, input.subscriptionId);
    if (!subject || subject.state === 'cancelled') return { kind: 'none', reason: 'cancelled', ...(subject?.cancelReason ? { cancelReason: subject.cancelReason } : {}) };
    if (!subject.sealedCard) return { kind: 'none', reason: 'no_card' };
    const card = await deps.cardVault.open(subject.sealedCard as SealedCard);
    const fingerprint = deps.cardVault.fingerprint(card.pan);
    // The checkout was screened; a card or e-mail blocklisted since (fraud found later) is not charged again.
    const blocked = await isBlocklisted(em, { tenantId: subject.tenantId, email: subject.email, cardFingerprint: fingerprint, bin: issuerPrefixOf(card.pan), binCountry: card.binCountry });
    if (blocked) return { kind: 'none', reason: 'blocked' };
    const orderId = await openRebill(em, input);
    return {
      kind: 'charge',
      orderId,
      tenantId: subject.tenantId,
      productId: subject.productId,
      email: subject.email,
      // Period 0 is the checkout's own charge, declined and salvaged into grace: retried at the checkout's price.
      amount: input.period === 0 ? subject.firstChargeAmount : subject.recurringAmount,
      ...(input.period === 0 && subject.checkoutPartnerSession ? { partnerSession: subject.checkoutPartnerSession } : {}),
      currency: subject.currency,
      sealedCard: subject.sealedCard,
      card: {
        // Derived again from the number: cards sealed before short numbers showed 6 digits held 8.
        ...(shownCardDigits(card.pan) ?? { bin: '', last4: '' }),
        network: card.network,
        binCountry: card.binCountry,
        expiryMonth: card.expiryMonth,
        expiryYear: card.expiryYear,
        fingerprint,
        holderName: card.holderName,
      },
    };
  }

  async function recordRebill(input: { subscriptionId: number; period: number; attempt: number; paid: boolean; statusId: number; nextBillingAt: string; graceUntil: string | null }): Promise<void> {
    await fork().transactional((tx) =>
      recordRebillOutcome(tx, { ...input, nextBillingAt: new Date(input.nextBillingAt), graceUntil: input.graceUntil === null ? null : new Date(input.graceUntil) }),
    );
  }

  /** Whether a failed rebill's charge may have been made all the same (its answer lost for good, or its approval not voided). */
  async function rebillMayHaveCharged(input: { orderId: number }): Promise<boolean> {
    return orderMayHaveCharged(fork(), input.orderId);
  }

  async function endSubscription(input: { subscriptionId: number; reason: string }): Promise<void> {
    await cancelSubscription(fork(), input);
  }

  async function markSubscriptionPaused(input: { subscriptionId: number; paused: boolean; reason?: PauseReason }): Promise<void> {
    await setSubscriptionPaused(fork(), input);
  }

  /** A subscription webhook (`subscription.renewed`, `.payment_failed`, `.cancelled`, `.paused`, `.resumed`), once per `eventKey`. */
  async function recordSubscriptionEvent(input: { tenantId: number; type: SubscriptionEventType; eventKey: string; occurredAt: string; data: Record<string, unknown> }): Promise<RecordedDelivery[]> {
    return recordWebhookDeliveries(fork(), { tenantId: input.tenantId, event: { type: input.type, timestamp: input.occurredAt, data: input.data }, eventKey: input.eventKey });
  }

  return withPermanentFailures({ keepCardForRebills, loadSubscription, prepareRebill, recordRebill, rebillMayHaveCharged, endSubscription, markSubscriptionPaused, recordSubscriptionEvent });
}
