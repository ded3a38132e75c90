import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import type { SubscriptionPlan } from '../../domain/catalog/product.ts';
import type { PaymentSettings } from '../../domain/payments/payment-input.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';
import { DomainError } from '../../domain/errors.ts';
import { openEncryptedCard } from './card-keys.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { toMoneyString } from '../../domain/money.ts';
import { splitSubAffiliate, validateSubmit } from '../../domain/payments/pre-validation.ts';
import { screenSubmit } from './screening.ts';
import type { SubmitRequest } from '../../domain/payments/submit-request.schema.ts';
import { preProcessingResult, type ResultContext, type SubmitResult } from '../../domain/payments/submit-result.ts';

export interface SubmitDeps {
  readonly em: EntityManager;
  readonly cardVault: CardVault;
  readonly secretBox: SecretBox;
  readonly runner: PaymentRunner;
  readonly settings: PaymentSettings;
}

interface ProductRow {
  id: number;
  tenant_id: number;
  price: string;
  currency: string;
  accepted_networks: string[];
  subscription_plan: SubscriptionPlan | null;
  card_submit_limit: number;
  card_submit_window_seconds: number;
  email_submit_limit: number;
}

/**
 * `POST /api/{productId}`: request-level checks (product, amount, idempotency key), the pre-processing
 * validations and screening of spec 7.1 (answered without a transaction), then the durable payment.
 */
export async function submitPayment(
  deps: SubmitDeps,
  input: { tenantId: number; productId: string; body: SubmitRequest; idempotencyKey?: string },
): Promise<SubmitResult> {
  const product = await findProduct(deps.em, input.tenantId, input.productId);
  const amount = product.price;
  if (input.body.amount !== undefined && toMoneyString(input.body.amount, 'amount') !== amount) {
    throw new DomainError('validation', `amount must equal the product price ${amount}`, { field: 'amount' });
  }
  const body = input.body;
  const context: ResultContext = { serviceSession: body.serviceSession, partnerSession: body.partnerSession, email: body.email, amount, mobileWalletA: body.mobileWalletA };

  const claim = input.idempotencyKey
    ? await claimIdempotencyKey(deps.em, deps.runner, input.tenantId, input.idempotencyKey, requestHash(input.productId, body))
    : { id: await reserveSubmitOrderId(deps.em) };
  if ('replay' in claim) return claim.replay;
  const submitOrderId = claim.id;
  const answerWithoutPayment = async (result: SubmitResult) => {
    if (input.idempotencyKey) {
      await deps.em.execute(`update idempotency_keys set result = ? where tenant_id = ? and key = ?`, [JSON.stringify(result), input.tenantId, input.idempotencyKey]);
    }
    return result;
  };

  const validation = validateSubmit(await withDecryptedCard(deps, input.tenantId, body), product.accepted_networks, new Date());
  if (!validation.ok) return answerWithoutPayment(preProcessingResult({ ...context, ...validation.card }, validation.info, validation.error));
  const { card, email } = validation;
  const fingerprint = deps.cardVault.fingerprint(card.pan);
  const cardContext: ResultContext = { ...context, email, bin: card.bin, last4: card.last4, binCountry: card.binCountry };

  const screening = await screenSubmit(deps.em, {
    tenantId: input.tenantId,
    productId: product.id,
    email,
    cardFingerprint: fingerprint,
    bin: card.bin,
    binCountry: card.binCountry,
    network: card.network,
    mid: body.mid,
    velocity: { cardSubmitLimit: product.card_submit_limit, cardSubmitWindowSeconds: product.card_submit_window_seconds, emailSubmitLimit: product.email_submit_limit },
    hasSubscriptionPlan: product.subscription_plan !== null,
  });
  if (!screening.ok) return answerWithoutPayment(preProcessingResult(cardContext, screening.info, screening.error));

  const subAffiliate = splitSubAffiliate(body.subAffiliate);
  return deps.runner.submit({
    tenantId: input.tenantId,
    productId: product.id,
    submitOrderId,
    amount,
    currency: product.currency,
    email,
    sealedCard: deps.cardVault.seal(card),
    card: { bin: card.bin, last4: card.last4, network: card.network, binCountry: card.binCountry, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, fingerprint, holderName: card.holderName },
    order: {
      partnerSession: body.partnerSession,
      serviceSession: body.serviceSession,
      campaignName: body.campaignName?.trim() || undefined,
      affiliateName: body.affiliateName?.trim() || undefined,
      subAffiliatePrimary: subAffiliate.primary,
      subAffiliateSecondary: subAffiliate.secondary,
      trackerClickId: body.trackerClickId,
      props: body.props,
      userAgent: body.useragent,
      ip: body.ip,
      billingAddress: body.address,
      shippingAddress: body.shippingAddress,
      storefront: body.storefront,
      phone: body.phone,
      mobileWalletA: body.mobileWalletA ?? false,
      firstName: body.address?.firstName,
      lastName: body.address?.lastName,
    },
    forcedMerchantAccountId: screening.forcedMerchantAccountId,
    cascade: body.cascade ?? false,
    threeDSecure: { enabled: body.threeDSecure?.enabled ?? false, cancelOnFail: body.threeDSecure?.cancelOnFail ?? true },
    subscriptionPlan: product.subscription_plan,
    resultContext: cardContext,
    settings: deps.settings,
  });
}

/**
 * Replaces client-encrypted card data by the card it holds. Data that does not decrypt, or whose card does
 * not match the `bin` and `lastFour` sent beside it, becomes an empty number: `Invalid CC Number`.
 */
async function withDecryptedCard(deps: SubmitDeps, tenantId: number, body: SubmitRequest): Promise<SubmitRequest> {
  const card = body.card;
  if (card?.encrypted === undefined || !card.bin || !card.lastFour) return body;
  const opened = await openEncryptedCard(deps.em, deps.secretBox, tenantId, card.encrypted);
  const pan = opened?.pan.replace(/[\s-]/g, '') ?? '';
  const consistent = pan.startsWith(card.bin) && pan.endsWith(card.lastFour);
  return {
    ...body,
    card: {
      name: opened?.name ?? card.name,
      pan: consistent ? pan : '',
      cvv: opened?.cvv ?? card.cvv,
      expiryMonth: opened?.expiryMonth ?? card.expiryMonth,
      expiryYear: opened?.expiryYear ?? card.expiryYear,
    },
  };
}

async function findProduct(em: EntityManager, tenantId: number, productId: string): Promise<ProductRow> {
  // Another tenant's product is indistinguishable from a missing one.
  const id = /^\d{1,9}$/.test(productId) ? Number(productId) : NaN;
  const [product] = Number.isNaN(id) ? [] : await em.execute<ProductRow[]>(`select * from products where id = ? and tenant_id = ?`, [id, tenantId]);
  if (!product) throw new DomainError('not_found', `Product ${productId} not found`);
  return product;
}

const IN_FLIGHT_WAIT_MS = 5_000;
/**
 * A claim this old with neither a stored outcome nor a workflow belongs to a request that failed before
 * its payment started (e.g. Temporal unreachable); a retry takes it over with the same order id, so the
 * workflow id still deduplicates and the key never stays stuck.
 */
const ABANDONED_CLAIM_MS = 30_000;

/** Order ids come from the orders sequence before the workflow starts, so its id names the order. */
async function reserveSubmitOrderId(em: EntityManager): Promise<number> {
  const [row] = await em.execute<{ id: string }[]>(`select nextval('orders_id_seq') as id`);
  return Number(row!.id);
}

export function requestHash(productId: string, body: SubmitRequest): string {
  return createHash('sha256').update(JSON.stringify([productId, body])).digest('hex');
}

/**
 * The first request with a key claims it with a fresh order id. A repeat with the same body gets the
 * first answer (a pre-processing outcome, or the payment's first result; it never charges twice); a
 * repeat while the first has not yet reached either is 409, as is the same key with another body.
 */
async function claimIdempotencyKey(
  em: EntityManager,
  runner: PaymentRunner,
  tenantId: number,
  key: string,
  hash: string,
): Promise<{ id: number } | { replay: SubmitResult }> {
  const id = await reserveSubmitOrderId(em);
  const [claimed] = await em.execute<{ submit_order_id: number }[]>(
    `insert into idempotency_keys (tenant_id, key, request_hash, submit_order_id, created_at) values (?, ?, ?, ?, now())
     on conflict (tenant_id, key) do nothing returning submit_order_id`,
    [tenantId, key, hash, id],
  );
  if (claimed) return { id };
  // The first request may still be validating: wait for its outcome or its workflow, briefly.
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    const [existing] = await em.execute<{ request_hash: string; submit_order_id: number; result: SubmitResult | null; age_ms: number }[]>(
      `select request_hash, submit_order_id, result, extract(epoch from now() - created_at) * 1000 as age_ms
         from idempotency_keys where tenant_id = ? and key = ?`,
      [tenantId, key],
    );
    if (!existing || existing.request_hash !== hash) throw new DomainError('conflict', 'Idempotency-Key was already used with a different request');
    let replay: SubmitResult | undefined = existing.result ?? undefined;
    let lastError: unknown;
    try {
      replay ??= await runner.resume(tenantId, existing.submit_order_id);
    } catch (error) {
      // The first request may be starting its workflow right now; such races settle within the wait.
      if (error instanceof DomainError) throw error;
      lastError = error;
    }
    if (replay) return { replay };
    if (!lastError && Number(existing.age_ms) > ABANDONED_CLAIM_MS) return { id: existing.submit_order_id };
    if (Date.now() > deadline) {
      if (lastError) throw lastError;
      throw new DomainError('conflict', 'A request with this Idempotency-Key is still in progress');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
