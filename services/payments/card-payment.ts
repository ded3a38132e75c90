import type { EntityManager } from '@mikro-orm/postgresql';
import { reserveOrderId } from '../../data/queries/orders.ts';
import type { PayableProduct } from '../../data/queries/products.ts';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import type { OrderDetails, PaymentSettings, PaymentWorkflowInput } from '../../domain/payments/payment-input.ts';
import { PaymentNotStartedError, PaymentStillProcessingError, type PaymentRunner } from '../../domain/payments/payment-runner.ts';
import { DomainError } from '../../domain/errors.ts';
import { paymentId } from '../../domain/payments-api/ids.ts';
import { maskCardNumbers } from '../../domain/payments/card-echo.ts';
import { issuerPrefixOf, validateSubmit } from '../../domain/payments/pre-validation.ts';
import type { SubmitRequest } from '../../domain/payments/submit-request.schema.ts';
import { preProcessingResult, type ResultContext, type SubmitResult } from '../../domain/payments/submit-result.ts';
import { takeOverAbandonedChallenge } from './abandoned-challenge.ts';
import { claimIdempotencyKey, rememberIdempotentResult } from './idempotency.ts';
import { releaseScreenedSlot, screenSubmit, type PassedScreening, type ScreeningInput } from './screening.ts';

export interface CardPaymentDeps {
  readonly em: EntityManager;
  readonly cardVault: CardVault;
  readonly runner: PaymentRunner;
  readonly settings: PaymentSettings;
}

/** What a route knows of a card payment (the generic API knows it once the order id names the payment). */
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

interface CardPaymentRequestBase {
  readonly tenantId: number;
  readonly product: PayableProduct;
  readonly amount: string;
  readonly currency: string;
  /** The caller's Idempotency-Key and the keyed digest of the request it is bound to. */
  readonly idempotency?: { readonly key: string; readonly requestHash: string };
}

/**
 * Where the details come from. The generic API names its payment after the order id, so it needs the id
 * before the checks (`namedAfterOrderId`: reserved first, one round trip). The submit route does not: without
 * an Idempotency-Key its id comes with screening, in the same round trip, and only for a submit that passes.
 */
type CardPaymentDetailsSource =
  | { readonly namedAfterOrderId: true; readonly details: (submitOrderId: number) => CardPaymentDetails | Promise<CardPaymentDetails> }
  | { readonly namedAfterOrderId?: false; readonly details: () => CardPaymentDetails | Promise<CardPaymentDetails> };

export type CardPaymentRequest = CardPaymentRequestBase & CardPaymentDetailsSource;

/**
 * One card payment, whichever route asked for it (`POST /api/{productId}`, `POST /payments`): claim the
 * Idempotency-Key (a repeat replays the first answer), run the pre-processing checks and screening of spec 7.1
 * (answered without a transaction; a submit without a key gets its order id there; an e-mail's subscription claim
 * held by a checkout left at its 3-D Secure challenge is given up for a submit that passes the other checks), then
 * hand the card,
 * sealed, to the durable payment workflow. Every first
 * answer is kept with its key, so repeats replay it even after Temporal has forgotten the workflow.
 */
export async function runCardPayment(deps: CardPaymentDeps, request: CardPaymentRequest): Promise<SubmitResult> {
  const keyed = request.idempotency ? { tenantId: request.tenantId, key: request.idempotency.key } : undefined;
  const claim = keyed
    ? await claimIdempotencyKey(deps, { ...keyed, requestHash: request.idempotency!.requestHash })
    : request.namedAfterOrderId
      ? { id: await reserveOrderId(deps.em) }
      : undefined;
  if (claim && 'replay' in claim) return claim.replay;
  const details = await (request.namedAfterOrderId ? request.details(claim!.id) : request.details());
  const answer = async (result: SubmitResult) => {
    if (keyed) await rememberIdempotentResult(deps.em, keyed, result);
    return result;
  };

  const { product } = request;
  const validation = validateSubmit(details.submission, product.acceptedNetworks, new Date());
  if (!validation.ok) return answer(preProcessingResult({ ...echoedContext(details.context, validation.error), ...validation.card }, validation.info, validation.error));
  const { card, email } = validation;
  const fingerprint = deps.cardVault.fingerprint(card.pan);
  // Sealed before screening writes anything: sealing may read the period's security-code key from the database, and a
  // failure there must leave no velocity slot or order id taken.
  const sealedCard = await deps.cardVault.seal(card);
  const cardContext: ResultContext = { ...details.context, email, bin: card.bin, last4: card.last4, binCountry: card.binCountry };

  const screeningInput: ScreeningInput = {
    tenantId: request.tenantId,
    productId: product.id,
    email,
    cardFingerprint: fingerprint,
    bin: issuerPrefixOf(card.pan),
    binCountry: card.binCountry,
    network: card.network,
    mid: details.mid,
    hasSubscriptionPlan: details.subscriptionPlan !== null,
    reserveOrderId: claim === undefined,
  };
  const releaseSlot = (passed: PassedScreening) => releaseScreenedSlot(deps.em, screeningInput, passed);
  let screening = await screenSubmit(deps.em, screeningInput);
  if (!screening.ok && screening.info === 'AlreadySubscribed') {
    const takenOver = await takeOverAbandonedChallenge(deps, { tenantId: request.tenantId, productId: product.id, email }, {
      screenWithoutSubscription: () => screenSubmit(deps.em, { ...screeningInput, hasSubscriptionPlan: false }),
      releaseSlot,
    });
    screening = takenOver ?? screening;
  }
  if (!screening.ok) return answer(preProcessingResult(cardContext, screening.info, screening.error));
  const submitOrderId = claim?.id ?? screening.submitOrderId!;

  const started = deps.runner.submit({
    tenantId: request.tenantId,
    productId: product.id,
    submitOrderId,
    amount: request.amount,
    currency: request.currency,
    email,
    sealedCard,
    card: { bin: card.bin, last4: card.last4, network: card.network, binCountry: card.binCountry, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, fingerprint, holderName: card.holderName },
    order: details.order(card),
    forcedMerchantAccountId: screening.forcedMerchantAccountId,
    cascade: details.cascade,
    threeDSecure: details.threeDSecure,
    ...(details.capture === false ? { capture: false } : {}),
    subscriptionPlan: details.subscriptionPlan,
    resultContext: cardContext,
    settings: deps.settings,
  });
  try {
    return answer(await started);
  } catch (error) {
    // Nothing of the payment exists: its velocity slot goes back, so a customer is not refused for a submit the
    // gateway never ran (an overloaded gateway would otherwise lock a card out for its window).
    if (error instanceof PaymentNotStartedError) {
      // A release that fails keeps the slot (what a payment that may run would hold): the caller's 503 stands.
      await releaseSlot(screening).catch(() => undefined);
    } else if (error instanceof DomainError && error.code === 'unavailable') {
      // Started and not answered in time: the caller is told which payment goes on.
      throw new PaymentStillProcessingError(paymentId(submitOrderId), keyed !== undefined);
    }
    throw error;
  }
}

/**
 * What a refused submit echoes: as sent, except an e-mail refused as invalid, whose card number (one typed into the
 * wrong field) is masked: the answer is kept with the Idempotency-Key. A valid e-mail is echoed as it will be kept.
 */
function echoedContext(context: ResultContext, error: string): ResultContext {
  if (error !== 'Invalid Email' || context.email === undefined) return context;
  return { ...context, email: maskCardNumbers(context.email) };
}
