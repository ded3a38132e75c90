import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ensureAffiliate, ensureCampaign } from '../../data/queries/attribution.ts';
import { upsertCustomer } from '../../data/queries/customers.ts';
import { findEligibleMerchantAccounts } from '../../data/queries/merchant-accounts.ts';
import { insertSubmitOrder, updateOrderState } from '../../data/queries/orders.ts';
import { findSubscriptionOfSubmitOrder, insertSubscriptionOfSubmitOrder } from '../../data/queries/subscriptions.ts';
import type { MerchantCandidate } from '../../domain/payments/attempts.ts';
import type { OrderDetails } from '../../domain/payments/payment-input.ts';
import type { OrderState } from '../../schema/entities/index.ts';

export interface PaymentOrderActivityDeps {
  readonly orm: MikroORM;
}

const DAY_MS = 86_400_000;

/** The submit order's life in PostgreSQL: opened before the first attempt, settled after the last. */
export function createPaymentOrderActivities(deps: PaymentOrderActivityDeps) {
  const fork = (): EntityManager => deps.orm.em.fork() as EntityManager;

  /**
   * Creates the submit order (its id was reserved by the gateway), the customer, campaign and
   * affiliate, and returns the eligible merchant accounts, best first. Idempotent on replay.
   */
  async function openPaymentOrder(input: {
    tenantId: number;
    productId: number;
    submitOrderId: number;
    workflowId: string;
    email: string;
    amount: string;
    currency: string;
    network: string;
    order: OrderDetails;
    forcedMerchantAccountId?: number;
  }): Promise<{ candidates: MerchantCandidate[] }> {
    const em = fork();
    await em.transactional(async (tx) => {
      const o = input.order;
      const customerId = await upsertCustomer(tx, { tenantId: input.tenantId, email: input.email, firstName: o.firstName, lastName: o.lastName, phone: o.phone });
      await insertSubmitOrder(tx, {
        id: input.submitOrderId,
        tenantId: input.tenantId,
        productId: input.productId,
        customerId,
        amount: input.amount,
        currency: input.currency,
        workflowId: input.workflowId,
        campaignId: o.campaignName ? await ensureCampaign(tx, input.tenantId, o.campaignName) : null,
        affiliateId: o.affiliateName ? await ensureAffiliate(tx, input.tenantId, o.affiliateName) : null,
        details: o,
      });
    });
    return { candidates: preferAnotherBankSecond(await findEligibleMerchantAccounts(em, input)) };
  }

  /** Final order state, and the subscription when the product has a plan and the outcome allows it. */
  async function settlePaymentOrder(input: {
    tenantId: number;
    productId: number;
    submitOrderId: number;
    email: string;
    state: OrderState;
    threeDSecureId?: string;
    challengeUrl?: string;
    subscription?: { state: 'active' | 'grace'; recurringAmount: string; intervalDays: number; trialDays: number; gracePeriodDays: number };
  }): Promise<{ orderId: number; subscriptionId: number }> {
    return fork().transactional(async (tx) => {
      await updateOrderState(tx, { orderId: input.submitOrderId, state: input.state, threeDSecureId: input.threeDSecureId, challengeUrl: input.challengeUrl });
      const plan = input.subscription;
      if (!plan) return { orderId: input.submitOrderId, subscriptionId: 0 };
      const existing = await findSubscriptionOfSubmitOrder(tx, input.submitOrderId);
      if (existing) return existing;
      const grace = plan.state === 'grace';
      return insertSubscriptionOfSubmitOrder(tx, {
        submitOrderId: input.submitOrderId,
        email: input.email,
        state: plan.state,
        orderState: grace ? 'declined' : 'approved',
        recurringAmount: plan.recurringAmount,
        nextBillingInDays: grace ? plan.gracePeriodDays : plan.trialDays + plan.intervalDays,
        graceUntil: grace ? new Date(Date.now() + plan.gracePeriodDays * DAY_MS) : null,
      });
    });
  }

  return { openPaymentOrder, settlePaymentOrder };
}

/** The second choice is what a cascade retries on: prefer one at another acquiring bank. */
function preferAnotherBankSecond(candidates: MerchantCandidate[]): MerchantCandidate[] {
  const [first, ...rest] = candidates;
  if (!first) return [];
  const otherBank = rest.find((c) => c.acquiringBank !== first.acquiringBank);
  return otherBank ? [first, otherBank, ...rest.filter((c) => c !== otherBank)] : candidates;
}
