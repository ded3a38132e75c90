import type { EntityManager } from '@mikro-orm/postgresql';
import { reserveOrderId } from '../../data/queries/orders.ts';
import type { PayableProduct } from '../../data/queries/products.ts';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import type { OrderDetails, PaymentSettings, PaymentWorkflowInput } from '../../domain/payments/payment-input.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';
import { validateSubmit } from '../../domain/payments/pre-validation.ts';
import type { SubmitRequest } from '../../domain/payments/submit-request.schema.ts';
import { preProcessingResult, type ResultContext, type SubmitResult } from '../../domain/payments/submit-result.ts';
import { claimIdempotencyKey, rememberIdempotentResult } from './idempotency.ts';
import { screenSubmit } from './screening.ts';

export interface CardPaymentDeps {
  readonly em: EntityManager;
  readonly cardVault: CardVault;
  readonly runner: PaymentRunner;
  readonly settings: PaymentSettings;
}

/** What a route knows of a card payment once its order id is reserved (the generic API names the payment after it). */
export interface CardPaymentDetails {
  /** Who the result is for, before the card is known. */
  readonly context: ResultContext;
  /** The fields the pre-processing checks of spec 7.1 read: sessions, e-mail, card. */
  readonly submission: SubmitRequest;
  /** A forced merchant account, by MID. */
  readonly mid?: string;
  readonly order: (card: { holderName?: string }) => OrderDetails;
  readonly cascade: boolean;
  readonly threeDSecure: PaymentWorkflowInput['threeDSecure'];
  readonly capture?: false;
  readonly subscriptionPlan: PaymentWorkflowInput['subscriptionPlan'];
}

export interface CardPaymentRequest {
  readonly tenantId: number;
  readonly product: PayableProduct;
  readonly amount: string;
  readonly currency: string;
  /** The caller's Idempotency-Key and the keyed digest of the request it is bound to. */
  readonly idempotency?: { readonly key: string; readonly requestHash: string };
  readonly details: (submitOrderId: number) => CardPaymentDetails | Promise<CardPaymentDetails>;
}

/**
 * One card payment, whichever route asked for it (`POST /api/{productId}`, `POST /payments`): claim the
 * Idempotency-Key (a repeat replays the first answer), run the pre-processing checks and screening of spec 7.1
 * (answered without a transaction), then hand the card, sealed, to the durable payment workflow. Every first
 * answer is kept with its key, so repeats replay it even after Temporal has forgotten the workflow.
 */
export async function runCardPayment(deps: CardPaymentDeps, request: CardPaymentRequest): Promise<SubmitResult> {
  const keyed = request.idempotency ? { tenantId: request.tenantId, key: request.idempotency.key } : undefined;
  const claim = keyed ? await claimIdempotencyKey(deps, { ...keyed, requestHash: request.idempotency!.requestHash }) : { id: await reserveOrderId(deps.em) };
  if ('replay' in claim) return claim.replay;
  const submitOrderId = claim.id;
  const details = await request.details(submitOrderId);
  const answer = async (result: SubmitResult) => {
    if (keyed) await rememberIdempotentResult(deps.em, keyed, result);
    return result;
  };

  const { product } = request;
  const validation = validateSubmit(details.submission, product.acceptedNetworks, new Date());
  if (!validation.ok) return answer(preProcessingResult({ ...details.context, ...validation.card }, validation.info, validation.error));
  const { card, email } = validation;
  const fingerprint = deps.cardVault.fingerprint(card.pan);
  const cardContext: ResultContext = { ...details.context, email, bin: card.bin, last4: card.last4, binCountry: card.binCountry };

  const screening = await screenSubmit(deps.em, {
    tenantId: request.tenantId,
    productId: product.id,
    email,
    cardFingerprint: fingerprint,
    bin: card.bin,
    binCountry: card.binCountry,
    network: card.network,
    mid: details.mid,
    velocity: product.velocity,
    hasSubscriptionPlan: details.subscriptionPlan !== null,
  });
  if (!screening.ok) return answer(preProcessingResult(cardContext, screening.info, screening.error));

  return answer(
    await deps.runner.submit({
      tenantId: request.tenantId,
      productId: product.id,
      submitOrderId,
      amount: request.amount,
      currency: request.currency,
      email,
      sealedCard: await deps.cardVault.seal(card),
      card: { bin: card.bin, last4: card.last4, network: card.network, binCountry: card.binCountry, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, fingerprint, holderName: card.holderName },
      order: details.order(card),
      forcedMerchantAccountId: screening.forcedMerchantAccountId,
      cascade: details.cascade,
      threeDSecure: details.threeDSecure,
      ...(details.capture === false ? { capture: false } : {}),
      subscriptionPlan: details.subscriptionPlan,
      resultContext: cardContext,
      settings: deps.settings,
    }),
  );
}
