import { Type } from '@sinclair/typebox';
import canonicalJson from 'safe-stable-stringify';
import type { PayableProduct } from '../../data/queries/products.ts';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import type { ProductLookup } from '../catalog/product-cache.ts';
import { DomainError } from '../../domain/errors.ts';
import { openEncryptedCard } from './card-keys.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { isPositiveMoney, toMoneyString } from '../../domain/money.ts';
import { currencyDecimals } from '../../domain/payments-api/minor-units.ts';
import { splitSubAffiliate } from '../../domain/payments/pre-validation.ts';
import { refuseCardNumbersInText } from './card-numbers-in-text.ts';
import { keptName, refuseOverlongNames } from '../../domain/payments/person-name.ts';
import { runCardPayment, type CardPaymentDeps } from './card-payment.ts';
import { SubmitCard, type SubmitRequest } from '../../domain/payments/submit-request.schema.ts';
import type { EncryptedCardPayload } from '../../domain/payments/card-encryption.ts';
import { compile, createStrictAjv, describeSchemaError } from '../../domain/validation/json-schema.ts';
import { findHostileValue, HOSTILE_VALUE_PROBLEM } from '../../domain/validation/hostile-text.ts';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';

/** The card payment's dependencies, the secret box that opens client-encrypted cards, and where products are found. */
export interface SubmitDeps extends CardPaymentDeps {
  readonly secretBox: SecretBox;
  readonly products: ProductLookup;
}

/**
 * `POST /api/{productId}`: request-level checks (product, amount, idempotency key), the pre-processing
 * validations and screening of spec 7.1 (answered without a transaction), then the durable payment.
 */
export async function submitPayment(
  deps: SubmitDeps,
  input: { tenantId: number; productId: string; body: SubmitRequest; idempotencyKey?: string },
): Promise<SubmitResult> {
  const product = await findProduct(deps, input.tenantId, input.productId);
  const amount = product.price;
  if (input.body.amount !== undefined && toMoneyString(input.body.amount, 'amount') !== amount) {
    throw new DomainError('validation', `amount must equal the product price ${priceAsWritten(amount, product.currency)}`, { field: 'amount' });
  }
  const body = input.body;
  // Two cards in one request: which one a reader takes is a guess, and a charge must never rest on a guess. Checked
  // before the Idempotency-Key is claimed, so a refused body leaves the key free for the corrected one.
  if (body.card?.encrypted !== undefined && body.card.pan) {
    throw new DomainError('validation', 'card.pan cannot be sent beside card.encrypted; send the card one way', { field: 'card.pan' });
  }
  refuseCardNumbersInText(cardholderTextOf(body));
  refuseOverlongNames({ 'address.firstName': body.address?.firstName, 'address.lastName': body.address?.lastName });
  const subAffiliate = splitSubAffiliate(body.subAffiliate);
  return runCardPayment(deps, {
    tenantId: input.tenantId,
    product,
    amount,
    currency: product.currency,
    idempotency: input.idempotencyKey ? { key: input.idempotencyKey, requestHash: requestHash(deps.cardVault, input.productId, body) } : undefined,
    // Nothing here depends on the order id: it is reserved by screening (or claimed with the Idempotency-Key).
    details: async () => ({
      context: { serviceSession: body.serviceSession, partnerSession: body.partnerSession, email: body.email, amount, mobileWalletA: body.mobileWalletA },
      submission: await withDecryptedCard(deps, input.tenantId, body),
      mid: body.mid,
      order: () => ({
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
        firstName: keptName(body.address?.firstName),
        lastName: keptName(body.address?.lastName),
      }),
      cascade: body.cascade ?? false,
      threeDSecure: { enabled: body.threeDSecure?.enabled ?? false, cancelOnFail: body.threeDSecure?.cancelOnFail ?? true },
      subscriptionPlan: product.subscriptionPlan,
    }),
  });
}

/** The text a cardholder types at checkout, by field: the name on the card, the phone and both addresses. */
function cardholderTextOf(body: SubmitRequest): Parameters<typeof refuseCardNumbersInText>[0] {
  const addresses = (['address', 'shippingAddress'] as const).flatMap((name) => Object.entries(body[name] ?? {}).map(([field, value]) => [`${name}.${field}`, value] as const));
  // A phone number has at most 15 digits (E.164): only a longer run in it can be a card (a 15-digit Amex passes).
  return { 'card.name': body.card?.name, phone: { text: body.phone, minDigits: 16 }, ...Object.fromEntries(addresses) };
}

/**
 * Replaces client-encrypted card data by the card it holds. Data that does not decrypt, or whose card does
 * not match the `bin` and `lastFour` sent beside it, becomes an empty number: `Invalid CC Number`. A card that
 * opens but breaks the rules of one sent in the clear is a 400 naming `card.encrypted` (a plain `pan` beside it is
 * refused before, by `submitPayment`).
 */
async function withDecryptedCard(deps: SubmitDeps, tenantId: number, body: SubmitRequest): Promise<SubmitRequest> {
  const card = body.card;
  if (card?.encrypted === undefined || !card.bin || !card.lastFour) return body;
  const opened = await openEncryptedCard(deps.em, deps.secretBox, tenantId, card.encrypted);
  if (opened) refuseUnfitCard(opened);
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

/** What an encrypted card may hold: the fields and limits of a card sent in the clear. */
const validateOpenedCard = compile(createStrictAjv(), Type.Pick(SubmitCard, ['name', 'pan', 'cvv', 'expiryMonth', 'expiryYear']));

/**
 * A card that opened is held to the rules of one sent in the clear (hostile text, lengths, types): the encryption
 * only hides it on its way, and what it holds goes into the payment (its holder name to the processor) all the same.
 */
function refuseUnfitCard(opened: EncryptedCardPayload): void {
  const card = Object.fromEntries(Object.entries(opened).filter(([, value]) => value !== undefined));
  const hostile = findHostileValue(card, 'card.encrypted');
  if (hostile) throw new DomainError('validation', `${hostile.path} ${HOSTILE_VALUE_PROBLEM[hostile.kind]}`, { field: 'card.encrypted' });
  if (!validateOpenedCard(card)) throw new DomainError('validation', describeSchemaError(validateOpenedCard.errors![0]!, 'card.encrypted').replace(/^(?!card\.encrypted)/, 'card.encrypted.'), { field: 'card.encrypted' });
  refuseCardNumbersInText({ 'card.encrypted.name': opened.name });
}

async function findProduct(deps: SubmitDeps, tenantId: number, productId: string): Promise<PayableProduct> {
  const id = /^\d{1,9}$/.test(productId) ? Number(productId) : NaN;
  const product = Number.isNaN(id) ? undefined : await deps.products.find(deps.em, tenantId, id);
  // A product with nothing to charge and nothing to subscribe to (the payments-api product, or one only booked by
  // `/payments`, which names its own amount) is no checkout product: a submit would answer a 0.00 card check as a
  // sale. A plan at price zero (a free trial keeping the card on file) still sells.
  if (!product || (!isPositiveMoney(product.price) && product.subscriptionPlan === null)) throw new DomainError('not_found', `Product ${productId} not found`);
  return product;
}

/**
 * What an Idempotency-Key is bound to: the product and the body, as canonical JSON (keys sorted, so the same
 * request with its fields in another order is still the same request), with the card number replaced by its
 * keyed fingerprint and the CVV left out, under a keyed digest: nothing stored can be brute-forced to a card.
 */
export function requestHash(cardVault: Pick<CardVault, 'fingerprint' | 'requestDigest'>, productId: string, body: SubmitRequest): string {
  const { card } = body;
  const cardIdentity = card && {
    ...(card.pan !== undefined ? { fingerprint: cardVault.fingerprint(card.pan.replace(/[\s-]/g, '')) } : {}),
    encrypted: card.encrypted,
    bin: card.bin,
    lastFour: card.lastFour,
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
    name: card.name,
  };
  return cardVault.requestDigest(canonicalJson([productId, { ...body, card: cardIdentity }]));
}

/** A price as its currency writes it: `1000` yen, not `1000.00` (prices are kept with two decimals). */
function priceAsWritten(price: string, currency: string): string {
  return currencyDecimals(currency) === 0 ? price.replace(/\.00$/, '') : price;
}
