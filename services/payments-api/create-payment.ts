import type { EntityManager } from '@mikro-orm/postgresql';
import canonicalJson from 'safe-stable-stringify';
import { reserveOrderId } from '../../data/queries/orders.ts';
import { ensurePaymentsApiProduct } from '../../data/queries/payments-api.ts';
import { findTenantProduct, type PayableProduct } from '../../data/queries/products.ts';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import { preProcessingError, resourceMissing } from '../../domain/payments-api/errors.ts';
import { paymentId } from '../../domain/payments-api/ids.ts';
import { fromMinorUnits } from '../../domain/payments-api/minor-units.ts';
import type { PaymentSettings } from '../../domain/payments/payment-input.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';
import { validateSubmit } from '../../domain/payments/pre-validation.ts';
import type { ResultContext, SubmitResult } from '../../domain/payments/submit-result.ts';
import { preProcessingResult } from '../../domain/payments/submit-result.ts';
import { claimIdempotencyKey, rememberIdempotentResult } from '../payments/idempotency.ts';
import { screenSubmit } from '../payments/screening.ts';

/** The body of `POST /payments` (validated against its schema at the edge). */
export interface CreatePaymentInput {
  readonly amount: number;
  readonly currency: string;
  readonly card: { readonly number: string; readonly exp_month: number; readonly exp_year: number; readonly cvc: string; readonly name?: string };
  readonly email: string;
  readonly mid?: string;
  readonly product?: number;
  readonly capture?: boolean;
  readonly cascade?: boolean;
  readonly three_d_secure?: { readonly enabled?: boolean; readonly cancel_on_fail?: boolean };
  readonly partner_session?: string;
  readonly metadata?: Record<string, string>;
}

export interface CreatePaymentDeps {
  readonly em: EntityManager;
  readonly cardVault: CardVault;
  readonly runner: PaymentRunner;
  readonly settings: PaymentSettings;
}

/**
 * `POST /payments`: the generic card API over the same durable payment as `POST /api/{productId}` (MID
 * selection, caps, velocity, cascade, 3-D Secure, webhooks). It differs only at the edge: the caller names the
 * amount (minor units) and currency, and the product is optional (the tenant's `payments-api` product otherwise).
 * Answers the payment's order id; a refusal before processing is a `PaymentApiError`, the same on every replay.
 */
export async function createPayment(deps: CreatePaymentDeps, input: { tenantId: number; body: CreatePaymentInput; idempotencyKey?: string }): Promise<number> {
  const body = input.body;
  const amount = fromMinorUnits(body.amount);
  const product = await productOf(deps.em, input.tenantId, body.product);

  const keyed = input.idempotencyKey ? { tenantId: input.tenantId, key: input.idempotencyKey } : undefined;
  const claim = keyed ? await claimIdempotencyKey(deps, { ...keyed, requestHash: requestHash(deps.cardVault, body) }) : { id: await reserveOrderId(deps.em) };
  if ('replay' in claim) return processedOrderOf(claim.replay);
  const submitOrderId = claim.id;
  // The payment id doubles as the service session: the submit rules require a session, and this one names the payment.
  const serviceSession = paymentId(submitOrderId);
  const context: ResultContext = { serviceSession, partnerSession: body.partner_session, email: body.email, amount };
  const answer = async (result: SubmitResult) => {
    if (keyed) await rememberIdempotentResult(deps.em, keyed, result);
    return processedOrderOf(result);
  };

  const validation = validateSubmit(
    {
      serviceSession,
      email: body.email,
      card: { pan: body.card.number, expiryMonth: body.card.exp_month, expiryYear: body.card.exp_year, cvv: body.card.cvc, name: body.card.name },
    },
    product.acceptedNetworks,
    new Date(),
  );
  if (!validation.ok) return answer(preProcessingResult({ ...context, ...validation.card }, validation.info, validation.error));
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
    velocity: product.velocity,
    hasSubscriptionPlan: false,
  });
  if (!screening.ok) return answer(preProcessingResult(cardContext, screening.info, screening.error));

  return answer(
    await deps.runner.submit({
      tenantId: input.tenantId,
      productId: product.id,
      submitOrderId,
      amount,
      currency: body.currency,
      email,
      sealedCard: await deps.cardVault.seal(card),
      card: { bin: card.bin, last4: card.last4, network: card.network, binCountry: card.binCountry, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, fingerprint, holderName: card.holderName },
      order: {
        serviceSession,
        partnerSession: body.partner_session,
        props: body.metadata,
        mobileWalletA: false,
        firstName: card.holderName?.split(' ')[0],
        lastName: card.holderName?.split(' ').slice(1).join(' ') || undefined,
      },
      forcedMerchantAccountId: screening.forcedMerchantAccountId,
      cascade: body.cascade ?? false,
      threeDSecure: { enabled: body.three_d_secure?.enabled ?? false, cancelOnFail: body.three_d_secure?.cancel_on_fail ?? true },
      ...(body.capture === false ? { capture: false } : {}),
      // A generic payment is one charge: subscriptions start from a plan product's submit.
      subscriptionPlan: null,
      resultContext: cardContext,
      settings: deps.settings,
    }),
  );
}

/** The payment order a result belongs to; a result answered before processing is that refusal, as an error. */
function processedOrderOf(result: SubmitResult): number {
  if (result.submitOrderId > 0) return result.submitOrderId;
  throw preProcessingError(result.info, result.error);
}

async function productOf(em: EntityManager, tenantId: number, productId: number | undefined): Promise<PayableProduct> {
  const id = productId ?? (await ensurePaymentsApiProduct(em, tenantId));
  const product = await findTenantProduct(em, tenantId, id);
  if (!product) throw resourceMissing('product', String(productId), 'product');
  return product;
}

/**
 * What an Idempotency-Key of `POST /payments` is bound to: the body as canonical JSON with the card number
 * replaced by its keyed fingerprint and the CVC left out, under a keyed digest (as for the submit route).
 */
function requestHash(cardVault: Pick<CardVault, 'fingerprint' | 'requestDigest'>, body: CreatePaymentInput): string {
  const { number, cvc: _cvc, ...card } = body.card;
  return cardVault.requestDigest(canonicalJson(['POST /payments', { ...body, card: { ...card, fingerprint: cardVault.fingerprint(number.replace(/[\s-]/g, '')) } }]));
}
