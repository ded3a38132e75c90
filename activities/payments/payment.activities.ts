import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import type { CardVault, SealedCard } from '../../domain/crypto/card-vault.ts';
import type { Logger } from '../../domain/logger.ts';
import type { AuthorizationOutcome, ProcessorGateway, ProcessorResult } from '../../adapters/processors/processor-gateway.ts';
import { attemptReference, type AttemptOutcome, type AttemptResult, type MerchantCandidate } from '../../domain/payments/attempts.ts';
import { statusById } from '../../domain/statuses/status-codes.ts';
import type { OrderState } from '../../schema/entities/index.ts';
import type { CardSummary, OrderDetails } from '../../domain/payments/payment-input.ts';

export interface PaymentActivityDeps {
  readonly orm: MikroORM;
  readonly logger: Logger;
  readonly secretBox: SecretBox;
  readonly cardVault: CardVault;
  readonly processors: { get(name: string): ProcessorGateway; names(): string[] };
}

interface AttemptContext {
  readonly tenantId: number;
  readonly productId: number;
  readonly submitOrderId: number;
  readonly attemptNumber: number;
  readonly candidate: MerchantCandidate;
  readonly amount: string;
  readonly currency: string;
  readonly email: string;
  readonly card: CardSummary;
  readonly partnerSession?: string;
  readonly firstName?: string;
  readonly lastName?: string;
}

const PROCESSOR_CONFIGURATION_INVALID = 4292;

export function createPaymentActivities(deps: PaymentActivityDeps) {
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
            const [customer] = await tx.execute<{ id: number }[]>(
        `insert into customers (tenant_id, email, first_name, last_name, phone, created_at, updated_at) values (?, ?, ?, ?, ?, now(), now())
         on conflict (tenant_id, email) do update set first_name = coalesce(excluded.first_name, customers.first_name),
           last_name = coalesce(excluded.last_name, customers.last_name), phone = coalesce(excluded.phone, customers.phone), updated_at = now()
         returning id`,
        [input.tenantId, input.email, input.order.firstName ?? null, input.order.lastName ?? null, input.order.phone ?? null],
      );
      const campaignId = input.order.campaignName ? await resolveNamed(tx, 'campaigns', input.tenantId, input.order.campaignName) : null;
      const affiliateId = input.order.affiliateName ? await resolveNamed(tx, 'affiliates', input.tenantId, input.order.affiliateName) : null;
      const o = input.order;
      await tx.execute(
        `insert into orders (id, tenant_id, product_id, customer_id, kind, state, amount, currency, partner_session, service_session, workflow_id,
           campaign_id, affiliate_id, sub_affiliate_primary, sub_affiliate_secondary, tracker_click_id, props, user_agent, ip,
           billing_address, shipping_address, storefront, phone, mobile_wallet_a, created_at, updated_at)
         values (?, ?, ?, ?, 'submit', 'processing', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now())
         on conflict (id) do nothing`,
        [
          input.submitOrderId, input.tenantId, input.productId, customer!.id, input.amount, input.currency,
          o.partnerSession && o.partnerSession.length <= 50 ? o.partnerSession : null, o.serviceSession ?? null, input.workflowId,
          campaignId, affiliateId, o.subAffiliatePrimary ?? null, o.subAffiliateSecondary ?? null, o.trackerClickId ?? null,
          json(o.props), o.userAgent ?? null, o.ip ?? null, json(o.billingAddress), json(o.shippingAddress), json(o.storefront), o.phone ?? null, o.mobileWalletA,
        ],
      );
    });
    return { candidates: await selectMerchantAccounts(em, input) };
  }

  /** One authorization on one merchant account; the attempt is recorded whatever the answer. */
  async function authorizeAttempt(input: AttemptContext & { sealedCard: string; threeDSecure: boolean; timeoutMs: number }): Promise<AttemptResult> {
    const reference = attemptReference(input.submitOrderId, input.attemptNumber);
    const card = deps.cardVault.open(input.sealedCard as SealedCard);
    const credentials = await credentialsFor(input.candidate.merchantAccountId, input.currency);
    if (!deps.processors.names().includes(input.candidate.gateway)) {
      // A merchant account naming a processor this deployment has no adapter for: nothing was sent, so
      // the outcome is known (a configuration decline), not something to retry or inquire about.
      const response = `No adapter is configured for gateway "${input.candidate.gateway}"`;
      deps.logger.error({ merchantAccountId: input.candidate.merchantAccountId, gateway: input.candidate.gateway }, response);
      return record(input, reference, { outcome: { kind: 'declined', statusId: PROCESSOR_CONFIGURATION_INVALID, message: response }, exchange: { gateway: input.candidate.gateway, httpStatus: 0, response } });
    }
    const processor = deps.processors.get(input.candidate.gateway);
    const result = await processor.authorize(
      {
        reference,
        orderReference: `ord${input.submitOrderId}`,
        merchantId: input.candidate.mid,
        amount: input.amount,
        currency: input.currency,
        card: { number: card.pan, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, cvv: card.cvv, holderName: card.holderName },
        threeDSecure: input.threeDSecure,
        credentials,
      },
      input.timeoutMs,
    );
    return record(input, reference, result);
  }

  /** Asks the processor what happened to an attempt whose answer was lost. */
  async function inquireAttempt(input: AttemptContext & { timeoutMs: number }): Promise<AttemptResult> {
    const reference = attemptReference(input.submitOrderId, input.attemptNumber);
    const result = await deps.processors.get(input.candidate.gateway).inquire(reference, input.timeoutMs);
    if (result.outcome === null) return record(input, reference, { outcome: { kind: 'declined', statusId: 0, message: 'not_found' }, exchange: result.exchange }, { kind: 'not_found' });
    if (result.outcome.kind === 'unknown') throw new Error(`Status inquiry of ${reference} failed: ${result.outcome.reason}`);
    return record(input, reference, result as ProcessorResult<AuthorizationOutcome>);
  }

  /** Finishes a 3-D Secure challenge at the processor. */
  async function completeThreeDSecure(input: AttemptContext & { processorTransactionId: string; proceedWithoutAuthentication: boolean; timeoutMs: number }): Promise<AttemptResult> {
    const reference = attemptReference(input.submitOrderId, input.attemptNumber);
    const result = await deps.processors.get(input.candidate.gateway).complete3ds(input.processorTransactionId, input.proceedWithoutAuthentication, input.timeoutMs);
    if (result.outcome.kind === 'unknown') throw new Error(`3-D Secure completion of ${reference} failed: ${result.outcome.reason}`);
    return record(input, reference, result);
  }

  /** Voids an authorization that must not be captured (an expired 3-D Secure wait). */
  async function voidAuthorization(input: { gateway: string; processorTransactionId: string; timeoutMs: number }): Promise<boolean> {
    const result = await deps.processors.get(input.gateway).void(input.processorTransactionId, input.timeoutMs);
    return result.outcome.voided;
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
    const em = fork();
    return em.transactional(async (tx) => {
            await tx.execute(
        `update orders set state = ?, three_d_secure_id = coalesce(?, three_d_secure_id), challenge_url = coalesce(?, challenge_url), updated_at = now() where id = ?`,
        [input.state, input.threeDSecureId ?? null, input.challengeUrl ?? null, input.submitOrderId],
      );
      if (!input.subscription) return { orderId: input.submitOrderId, subscriptionId: 0 };
      const [existing] = await tx.execute<{ id: number; order_id: number }[]>(
        `select s.id, s.order_id from subscriptions s join orders o on o.id = s.order_id where o.parent_order_id = ?`,
        [input.submitOrderId],
      );
      if (existing) return { orderId: existing.order_id, subscriptionId: existing.id };
      const [order] = await tx.execute<{ id: number }[]>(
        `insert into orders (tenant_id, product_id, customer_id, kind, parent_order_id, state, amount, currency, partner_session, service_session, mobile_wallet_a, created_at, updated_at)
         select tenant_id, product_id, customer_id, 'subscription', id, ?, ?, currency, partner_session, service_session, mobile_wallet_a, now(), now() from orders where id = ?
         returning id`,
        [input.subscription.state === 'active' ? 'approved' : 'declined', input.subscription.recurringAmount, input.submitOrderId],
      );
      const plan = input.subscription;
      const [subscription] = await tx.execute<{ id: number }[]>(
        `insert into subscriptions (tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, grace_until, created_at)
         select tenant_id, product_id, customer_id, ?, ?, ?, ?, now() + make_interval(days => ?), ?, now() from orders where id = ?
         returning id`,
        [
          order!.id, input.email, plan.state, plan.recurringAmount, plan.state === 'grace' ? plan.gracePeriodDays : plan.trialDays + plan.intervalDays,
          plan.state === 'grace' ? new Date(Date.now() + plan.gracePeriodDays * 86_400_000) : null, input.submitOrderId,
        ],
      );
      return { orderId: order!.id, subscriptionId: subscription!.id };
    });
  }

  async function credentialsFor(merchantAccountId: number, currency: string): Promise<Record<string, string>> {
    const [row] = await fork().execute<{ credentials_ciphertext: string }[]>(
      `select credentials_ciphertext from merchant_account_currencies where merchant_account_id = ? and currency = ?`,
      [merchantAccountId, currency],
    );
    return row ? (JSON.parse(deps.secretBox.open(row.credentials_ciphertext)) as Record<string, string>) : {};
  }

  /** Upserts the attempt's transaction row by its reference, so a replayed activity records once. */
  async function record(input: AttemptContext, reference: string, result: ProcessorResult<AuthorizationOutcome>, override?: AttemptOutcome): Promise<AttemptResult> {
    const outcome: AttemptOutcome = override ?? toAttemptOutcome(result.outcome);
    const statusId = outcome.kind === 'approved' || outcome.kind === 'declined' ? outcome.statusId : outcome.kind === 'challenge' ? 1789 : 4285;
    const status = statusById(statusId)?.status ?? 'Unknown';
    const row = await fork().transactional(async (tx) => {
    const [upserted] = await tx.execute<{ id: string; was_success: boolean | null }[]>(
      `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
         gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, auth_code, email, first_name, last_name,
         bin, last4, brand, bin_country, card_fingerprint, expiry_month, expiry_year, eci, partner_session, sandbox, refundable, gateway_response, sent_at, completed_at)
       select ?, o.tenant_id, o.id, o.product_id, o.customer_id, ?, 'authorization', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, o.partner_session, ?, ?, ?, now(), ?
         from orders o where o.id = ?
       on conflict (reference) do update set gateway_transaction_id = coalesce(excluded.gateway_transaction_id, transactions.gateway_transaction_id),
         status_id = excluded.status_id, status = excluded.status, success = excluded.success, auth_code = excluded.auth_code, eci = excluded.eci,
         refundable = excluded.refundable, gateway_response = excluded.gateway_response, completed_at = excluded.completed_at
       returning id, (select previous.success from transactions previous where previous.reference = ?) as was_success`,
      [
        randomUUID(), input.candidate.merchantAccountId, reference, input.attemptNumber, input.candidate.gateway,
        'processorTransactionId' in outcome ? (outcome.processorTransactionId ?? null) : null, statusId, status, outcome.kind === 'approved',
        input.amount, input.currency, input.candidate.mid, input.candidate.descriptor || null, outcome.kind === 'approved' ? outcome.authCode : null,
        input.email, input.firstName ?? null, input.lastName ?? null, input.card.bin, input.card.last4, input.card.network, input.card.binCountry ?? null,
        input.card.fingerprint, input.card.expiryMonth, input.card.expiryYear, outcome.kind === 'approved' ? (outcome.eci ?? null) : null,
        input.candidate.gateway === 'sandbox', outcome.kind === 'approved', JSON.stringify(result.exchange),
        outcome.kind === 'challenge' || outcome.kind === 'unknown' ? null : new Date(), input.submitOrderId, reference,
      ],
    );
    // RETURNING's subquery sees the row as it was: count an approval into the month's volume once.
    if (outcome.kind === 'approved' && upserted!.was_success !== true) {
      await tx.execute(
        `insert into merchant_account_volumes (merchant_account_id, month, approved_amount) values (?, date_trunc('month', now())::date, ?)
         on conflict (merchant_account_id, month) do update set approved_amount = merchant_account_volumes.approved_amount + excluded.approved_amount`,
        [input.candidate.merchantAccountId, input.amount],
      );
    }
    return upserted!;
    });
    deps.logger.info({ reference, outcome: outcome.kind, statusId, gateway: input.candidate.gateway }, 'authorization attempt');
    return { reference, transactionId: row!.id, outcome, exchange: result.exchange };
  }

  return { openPaymentOrder, authorizeAttempt, inquireAttempt, completeThreeDSecure, voidAuthorization, settlePaymentOrder };
}

function toAttemptOutcome(outcome: AuthorizationOutcome): AttemptOutcome {
  switch (outcome.kind) {
    case 'approved':
      return { kind: 'approved', statusId: outcome.statusId, processorTransactionId: outcome.processorTransactionId, authCode: outcome.authCode, eci: outcome.eci };
    case 'declined':
      return { kind: 'declined', statusId: outcome.statusId, processorTransactionId: outcome.processorTransactionId };
    case 'challenge':
      return { kind: 'challenge', processorTransactionId: outcome.processorTransactionId, challengeUrl: outcome.challengeUrl, redirect: outcome.redirect };
    case 'unknown':
      return { kind: 'unknown', reason: outcome.reason };
  }
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

async function resolveNamed(em: EntityManager, table: 'campaigns' | 'affiliates', tenantId: number, name: string): Promise<number> {
  const [row] = await em.execute<{ id: number }[]>(
    `insert into ${table} (tenant_id, name, created_at) values (?, ?, now()) on conflict (tenant_id, name) do update set name = excluded.name returning id`,
    [tenantId, name.trim()],
  );
  return row!.id;
}

/**
 * Eligible merchant accounts, least used relative to their monthly cap first: live, accepting the
 * card's network and the currency, `maxPrice` covering the amount, and month-to-date approved volume
 * plus this amount within `monthlyCap`. The second choice prefers another acquiring bank (cascade).
 */
async function selectMerchantAccounts(
  em: EntityManager,
  input: { tenantId: number; amount: string; currency: string; network: string; forcedMerchantAccountId?: number },
): Promise<MerchantCandidate[]> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `with volume as (
       select merchant_account_id, approved_amount as approved from merchant_account_volumes where month = date_trunc('month', now())::date)
     select m.id, m.mid, m.gateway, m.descriptor, m.acquiring_bank, m.mid_portal_url, m.allow_retries_from_other_mids, m.allow_insufficient_funds_retries,
            coalesce(v.approved, 0) / nullif(m.monthly_cap, 0) as usage
       from merchant_accounts m
       join merchant_account_currencies c on c.merchant_account_id = m.id and c.currency = ?
       left join volume v on v.merchant_account_id = m.id
      where m.tenant_id = ?
        and (cast(? as int) is not null and m.id = ?
             or cast(? as int) is null and m.fully_live
                and (m.max_price is null or m.max_price >= cast(? as numeric))
                and (? <> 'NetworkA' or m.enabled_network_a) and (? <> 'NetworkB' or m.enabled_network_b)
                and (m.monthly_cap is null or coalesce(v.approved, 0) + cast(? as numeric) <= m.monthly_cap))
      order by usage asc nulls first, m.id asc`,
    [
      input.currency, input.tenantId, input.forcedMerchantAccountId ?? null, input.forcedMerchantAccountId ?? null, input.forcedMerchantAccountId ?? null,
      input.amount, input.network, input.network, input.amount,
    ],
  );
  const candidates = rows.map(
    (row): MerchantCandidate => ({
      merchantAccountId: row.id as number,
      mid: row.mid as string,
      gateway: row.gateway as string,
      descriptor: (row.descriptor as string | null) ?? '',
      acquiringBank: (row.acquiring_bank as string | null) ?? '',
      midPortalUrl: (row.mid_portal_url as string | null) ?? '',
      allowRetriesFromOtherMids: row.allow_retries_from_other_mids as boolean,
      allowInsufficientFundsRetries: row.allow_insufficient_funds_retries as boolean,
    }),
  );
  const [first, ...rest] = candidates;
  if (!first) return [];
  const otherBank = rest.find((c) => c.acquiringBank !== first.acquiringBank);
  return otherBank ? [first, otherBank, ...rest.filter((c) => c !== otherBank)] : candidates;
}
