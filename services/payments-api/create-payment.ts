import canonicalJson from 'safe-stable-stringify';
import { ensurePaymentsApiProduct } from '../../data/queries/payments-api.ts';
import type { PayableProduct } from '../../data/queries/products.ts';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import { preProcessingError, resourceMissing } from '../../domain/payments-api/errors.ts';
import { paymentId } from '../../domain/payments-api/ids.ts';
import { fromMinorUnits } from '../../domain/payments-api/minor-units.ts';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';
import { runCardPayment, type CardPaymentDeps } from '../payments/card-payment.ts';
import { refuseCardNumbersInText } from '../payments/card-numbers-in-text.ts';
import { namesOfHolder, refuseOverlongNames } from '../../domain/payments/person-name.ts';
import { expiryFieldAtFault } from '../../domain/payments/card.ts';
import type { ProductLookup } from '../catalog/product-cache.ts';

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

export interface CreatePaymentDeps extends CardPaymentDeps {
  readonly products: ProductLookup;
}

/**
 * `POST /payments`: the generic card API over the same durable payment as `POST /api/{productId}` (MID
 * selection, caps, velocity, cascade, 3-D Secure, webhooks). It differs only at the edge: the caller names the
 * amount (minor units) and currency, and the product is optional (the tenant's `payments-api` product otherwise).
 * Answers the payment's order id; a refusal before processing is a `PaymentApiError`, the same on every replay.
 */
export async function createPayment(deps: CreatePaymentDeps, input: { tenantId: number; body: CreatePaymentInput; idempotencyKey?: string }): Promise<number> {
  const body = input.body;
  refuseCardNumbersInText({ 'card.name': body.card.name });
  refuseOverlongNames({ 'card.name': body.card.name });
  const amount = fromMinorUnits(body.amount, body.currency);
  const product = await productOf(deps, input.tenantId, body.product);
  const result = await runCardPayment(deps, {
    tenantId: input.tenantId,
    product,
    amount,
    currency: body.currency,
    idempotency: input.idempotencyKey ? { key: input.idempotencyKey, requestHash: requestHash(deps.cardVault, body) } : undefined,
    namedAfterOrderId: true,
    details: (submitOrderId) => {
      // The payment id doubles as the service session: the submit rules require a session, and this one names the payment.
      const serviceSession = paymentId(submitOrderId);
      return {
        context: { serviceSession, partnerSession: body.partner_session, email: body.email, amount },
        submission: {
          serviceSession,
          email: body.email,
          card: { pan: body.card.number, expiryMonth: body.card.exp_month, expiryYear: body.card.exp_year, cvv: body.card.cvc, name: body.card.name },
        },
        mid: body.mid,
        order: (card) => ({
          serviceSession,
          partnerSession: body.partner_session,
          props: body.metadata,
          mobileWalletA: false,
          ...namesOfHolder(card.holderName),
        }),
        cascade: body.cascade ?? false,
        threeDSecure: { enabled: body.three_d_secure?.enabled ?? false, cancelOnFail: body.three_d_secure?.cancel_on_fail ?? true },
        ...(body.capture === false ? { capture: false as const } : {}),
        // A generic payment is one charge: subscriptions start from a plan product's submit.
        subscriptionPlan: null,
      };
    },
  });
  return processedOrderOf(result, expiryFieldAtFault(body.card.exp_month, body.card.exp_year, new Date()));
}

/** The payment order a result belongs to; a result answered before processing is that refusal, as an error. */
function processedOrderOf(result: SubmitResult, expiryAtFault: 'month' | 'year'): number {
  if (result.submitOrderId > 0) return result.submitOrderId;
  throw preProcessingError(result.info, result.error, expiryAtFault);
}

async function productOf(deps: CreatePaymentDeps, tenantId: number, productId: number | undefined): Promise<PayableProduct> {
  const id = productId ?? (await ensurePaymentsApiProduct(deps.em, tenantId));
  const product = await deps.products.find(deps.em, tenantId, id);
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
