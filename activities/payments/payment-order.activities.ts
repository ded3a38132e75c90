import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import {
  findAttemptMerchantAccount,
  findEligibleMerchantAccounts,
  liveAccountsRefuseNetwork,
  findForcedMerchantAccount,
  findReservedMerchantAccount,
  releaseMonthlyVolume,
  reserveMonthlyVolume,
} from '../../data/queries/merchant-accounts.ts';
import { closeSubmitOrder, openSubmitOrder, updateOrderState } from '../../data/queries/orders.ts';
import { poolExecutor } from '../../data/sql-executor.ts';
import { endUncompletedChallenges } from '../../data/queries/transactions.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';
import { statusNameOf } from '../../domain/statuses/status-codes.ts';
import {
  activateSubscriptionOfSubmitOrder,
  findSubscriptionOfSubmitOrder,
  insertSubscriptionOfSubmitOrder,
  releasePendingSubscriptionOfSubmitOrder,
} from '../../data/queries/subscriptions.ts';
import { attemptReference, type MerchantCandidate } from '../../domain/payments/attempts.ts';
import { FORCED_ACCOUNT_REFUSALS, forcedAccountRefusal } from '../../domain/payments/forced-merchant-account.ts';
import type { CardSummary, OrderDetails } from '../../domain/payments/payment-input.ts';
import type { CaptureMethod, OrderState, UnprocessedReason } from '../../schema/entities/index.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';

export interface PaymentOrderActivityDeps {
  readonly orm: MikroORM;
}

/** The merchant account an attempt goes to; `refusal` is the status a forced account declines with unsent. */
/** The account an attempt goes to (or the status a forced one refuses it with), or none: `networkRefused` when no live account takes the card's network at all. */
export type MerchantAccountChoice = { account: MerchantCandidate; refusal?: number } | { account?: undefined; networkRefused?: true };

export interface OpenPaymentOrderInput {
  tenantId: number;
  productId: number;
  submitOrderId: number;
  workflowId: string;
  email: string;
  amount: string;
  currency: string;
  order: OrderDetails;
  subscription?: { recurringAmount: string };
  /** The card, kept on the order as shown; absent from a payment started by a worker of before. */
  card?: CardSummary;
  /** `manual` for `capture: false`; absent from a payment started by a worker of before. */
  captureMethod?: CaptureMethod;
}

export interface ReserveMerchantAccountInput {
  tenantId: number;
  submitOrderId: number;
  amount: string;
  currency: string;
  network: string;
  forcedMerchantAccountId?: number;
  triedMerchantAccountIds: number[];
  preferAnotherBankThan?: string;
}

/** An order opened by `openPaymentOrder`; `created` when this run created it (nothing of it recorded before). */
export interface OpenedOrder {
  readonly alreadySubscribed: boolean;
  readonly created: boolean;
}

/** An opened order: already subscribed (nothing reserved), or the first attempt's account choice. */
export type OpenedPaymentOrder = { alreadySubscribed: true } | { alreadySubscribed: false; firstAccount: MerchantAccountChoice };

const DAY_SECONDS = 86_400;
const DAY_MS = DAY_SECONDS * 1000;
/** States after which the payment holds nothing any more: no cap reservation, no unconfirmed subscription. */
const FINAL_STATES: readonly OrderState[] = ['approved', 'declined', 'failed', 'expired', 'voided'];

/** The submit order's life in PostgreSQL: opened before the first attempt, settled after the last. */
export function createPaymentOrderActivities(deps: PaymentOrderActivityDeps) {
  const fork = (): EntityManager => deps.orm.em.fork() as EntityManager;
  // Single statements go to the ORM's pool as prepared statements, planned once per connection.
  const sql = poolExecutor(deps.orm);

  /**
   * Creates the submit order (its id was reserved by the gateway), the customer, campaign and affiliate, and,
   * for a product with a plan, claims the e-mail's one live subscription to it as `pending`, before any
   * processor call. `alreadySubscribed` when another payment or subscription holds it. Idempotent on replay.
   */
  async function openPaymentOrder(input: OpenPaymentOrderInput): Promise<OpenedOrder> {
    const order = {
      id: input.submitOrderId,
      tenantId: input.tenantId,
      productId: input.productId,
      amount: input.amount,
      currency: input.currency,
      workflowId: input.workflowId,
      email: input.email,
      details: input.order,
      card: input.card && { brand: input.card.network, bin: input.card.bin, last4: input.card.last4, expiryMonth: input.card.expiryMonth, expiryYear: input.card.expiryYear },
      captureMethod: input.captureMethod,
    };
    // Without a plan, one statement.
    if (!input.subscription) return { alreadySubscribed: false, ...(await openSubmitOrder(sql, order)) };
    const subscription = input.subscription;
    return fork().transactional(async (tx) => {
      const { created } = await openSubmitOrder(tx, order);
      if (await findSubscriptionOfSubmitOrder(tx, input.submitOrderId)) return { alreadySubscribed: false, created };
      const claimed = await insertSubscriptionOfSubmitOrder(tx, {
        submitOrderId: input.submitOrderId,
        email: input.email,
        state: 'pending',
        orderState: 'processing',
        recurringAmount: subscription.recurringAmount,
        nextBillingInDays: 0,
        graceUntil: null,
      });
      return { alreadySubscribed: claimed === undefined, created };
    });
  }

  /**
   * Chooses the merchant account of an attempt and reserves the amount on its monthly volume: the forced
   * account when the request named one (refused with a status when it cannot take the payment), else the
   * least used eligible account not tried yet, preferring another acquiring bank for a cascade. A candidate
   * whose cap a concurrent payment used up meanwhile is passed over. A replay finds its own reservation.
   * `orderIsNew`: this run created the order just now, so nothing of it can be recorded or reserved yet.
   */
  async function reserveMerchantAccount(input: ReserveMerchantAccountInput, orderIsNew = false): Promise<MerchantAccountChoice> {
    const em = fork();
    const reference = attemptReference(input.submitOrderId, input.triedMerchantAccountIds.length + 1);
    if (!orderIsNew) {
      // A payment run again from its start (its worker died before Temporal stored the workflow task) finds the
      // attempts it already recorded, their reservations ended: each on the same account again, never another one the
      // processor would see as a new authorization, and with the answer its caller may already have had. First, since
      // a reservation still held may be a later attempt's (a cascade's second account, its attempt in flight).
      const recorded = await findAttemptMerchantAccount(em, reference);
      if (recorded) return { account: recorded };
      const reserved = await findReservedMerchantAccount(em, input.submitOrderId);
      // An earlier attempt's reservation is released when its outcome is recorded, so one found here is this attempt's.
      if (reserved && !input.triedMerchantAccountIds.includes(reserved.merchantAccountId)) return { account: reserved };
    }
    const reserve = (account: MerchantCandidate) => reserveMonthlyVolume(sql, { orderId: input.submitOrderId, merchantAccountId: account.merchantAccountId, reference });

    if (input.forcedMerchantAccountId !== undefined) {
      // A forced account is the only one: a cascade never leaves it.
      if (input.triedMerchantAccountIds.includes(input.forcedMerchantAccountId)) return {};
      const forced = await findForcedMerchantAccount(em, { ...input, merchantAccountId: input.forcedMerchantAccountId });
      if (!forced) return {};
      const refusal = forcedAccountRefusal(forced.fit);
      if (refusal !== undefined) return { account: forced.candidate, refusal };
      return (await reserve(forced.candidate)) ? { account: forced.candidate } : { account: forced.candidate, refusal: FORCED_ACCOUNT_REFUSALS.monthlyCapReached };
    }

    const candidates = await findEligibleMerchantAccounts(sql, { ...input, excludedMerchantAccountIds: input.triedMerchantAccountIds });
    for (const candidate of preferAnotherBank(candidates, input.preferAnotherBankThan)) {
      if (await reserve(candidate)) return { account: candidate };
    }
    // Every candidate refused, or none was left: another run of this step (one that timed out, still running) may
    // have reserved meanwhile, and its account counts as used in the candidates' figures. The attempt goes there.
    const reservedMeanwhile = await findReservedMerchantAccount(em, input.submitOrderId);
    if (reservedMeanwhile && !input.triedMerchantAccountIds.includes(reservedMeanwhile.merchantAccountId)) return { account: reservedMeanwhile };
    const firstAttempt = input.triedMerchantAccountIds.length === 0;
    return firstAttempt && (await liveAccountsRefuseNetwork(sql, input)) ? { networkRefused: true } : {};
  }

  /**
   * The first step of a payment as one local activity: opens the order, then (unless the e-mail is already
   * subscribed) reserves the first attempt's merchant account. One step instead of two spares the workflow an
   * activation before its answer; both halves are idempotent, so a replay after a crash is as safe as before.
   */
  async function openOrderAndReserveAccount(input: OpenPaymentOrderInput & { firstAccount: ReserveMerchantAccountInput }): Promise<OpenedPaymentOrder & { orderIsNew?: boolean }> {
    const { firstAccount, ...order } = input;
    const opened = await openPaymentOrder(order);
    if (opened.alreadySubscribed) return { alreadySubscribed: true };
    return { alreadySubscribed: false, firstAccount: await reserveMerchantAccount(firstAccount, opened.created), orderIsNew: opened.created };
  }

  /**
   * Final order state; the subscription claimed at opening becomes active (approved) or grace (salvaged), or is
   * given up. A final state also releases any cap reservation still held (an expired challenge, an unknown answer).
   */
  async function settlePaymentOrder(input: {
    tenantId: number;
    productId: number;
    submitOrderId: number;
    email: string;
    state: OrderState;
    threeDSecureId?: string;
    challengeUrl?: string;
    /** A session issued by the service for the 3-D Secure completion (see the payment workflow). */
    serviceSession?: string;
    /** A payment failed before any processor was asked: why (`GET /payments/{id}` says it). */
    unprocessedReason?: UnprocessedReason;
    /** `firstChargeInSeconds`: absent in activities scheduled before it existed (days of the plan then). */
    subscription?: { state: 'active' | 'grace'; recurringAmount: string; intervalDays: number; trialDays: number; gracePeriodDays: number; firstChargeInSeconds?: number };
  }): Promise<{ orderId: number; subscriptionId: number }> {
    if (input.state === 'expired' || input.state === 'voided') {
      // The challenged attempt ends as the payment does (failed 3-D Secure, or voided while it waited), not left
      // "Submitted" for good.
      const ended = input.state === 'voided' ? StatusId.VOIDED : StatusId.THREE_DS_FAILED;
      await endUncompletedChallenges(sql, { orderId: input.submitOrderId, submittedStatusId: StatusId.SUBMITTED, statusId: ended, status: statusNameOf(ended) });
    }
    const keepsNothing = FINAL_STATES.includes(input.state) && !input.subscription;
    if (keepsNothing && !input.threeDSecureId && !input.challengeUrl && !input.serviceSession) {
      // The common close (every payment that keeps no subscription) in one statement.
      await closeSubmitOrder(sql, { orderId: input.submitOrderId, state: input.state, ...(input.unprocessedReason ? { unprocessedReason: input.unprocessedReason } : {}) });
      return { orderId: input.submitOrderId, subscriptionId: 0 };
    }
    return fork().transactional(async (tx) => {
      await updateOrderState(tx, {
        orderId: input.submitOrderId,
        state: input.state,
        threeDSecureId: input.threeDSecureId,
        challengeUrl: input.challengeUrl,
        serviceSession: input.serviceSession,
      });
      if (!FINAL_STATES.includes(input.state)) return { orderId: input.submitOrderId, subscriptionId: 0 };
      await releaseMonthlyVolume(tx, { orderId: input.submitOrderId });
      const plan = input.subscription;
      if (!plan) {
        await releasePendingSubscriptionOfSubmitOrder(tx, input.submitOrderId);
        return { orderId: input.submitOrderId, subscriptionId: 0 };
      }
      const grace = plan.state === 'grace';
      await activateSubscriptionOfSubmitOrder(tx, {
        submitOrderId: input.submitOrderId,
        state: plan.state,
        orderState: grace ? 'declined' : 'approved',
        nextBillingInSeconds: plan.firstChargeInSeconds ?? (grace ? plan.gracePeriodDays : plan.trialDays + plan.intervalDays) * DAY_SECONDS,
        graceUntil: grace ? new Date(Date.now() + plan.gracePeriodDays * DAY_MS) : null,
      });
      return (await findSubscriptionOfSubmitOrder(tx, input.submitOrderId)) ?? { orderId: input.submitOrderId, subscriptionId: 0 };
    });
  }

  return withPermanentFailures({ openPaymentOrder, reserveMerchantAccount, openOrderAndReserveAccount, settlePaymentOrder });
}

/** A cascade retries at another acquiring bank where one is eligible; the order is otherwise kept. */
function preferAnotherBank(candidates: MerchantCandidate[], bank: string | undefined): MerchantCandidate[] {
  if (bank === undefined) return candidates;
  return [...candidates.filter((c) => c.acquiringBank !== bank), ...candidates.filter((c) => c.acquiringBank === bank)];
}
