import { Type } from '@sinclair/typebox';
import { completeThreeDSecure } from '../../services/payments/complete-three-d-secure.ts';
import { SUBMIT_INFOS } from '../../domain/payments/submit-result.ts';
import { findChallengeRedirect } from '../../data/queries/three-d-secure.ts';
import { submitPayment } from '../../services/payments/submit-payment.ts';
import type { ProductLookup } from '../../services/catalog/product-cache.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';
import { SubmitRequest, ThreeDSecureRequest } from '../../domain/payments/submit-request.schema.ts';
import { DomainError } from '../../domain/errors.ts';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import type { PaymentSettings } from '../../domain/payments/payment-input.ts';
import { callerOf } from '../http/authentication.ts';
import { idempotencyKeyHeader, idempotencyKeyOf } from '../http/idempotency-key.ts';
import { errorResponses, ref, stringEnum } from '../http/schemas.ts';
import { API_KEY_REQUIRED, PUBLIC } from '../http/security.ts';
import type { TypedApp } from '../http/typed-app.ts';

export const SubmitResult = Type.Object(
  {
    serviceSession: Type.String(),
    partnerSession: Type.String(),
    subscribeSuccess: Type.Boolean(),
    chargeSuccess: Type.Boolean(),
    info: stringEnum(SUBMIT_INFOS, { description: '`Success` when charged; `Pending` when a 3-D Secure challenge waits' }),
    error: Type.String(),
    email: Type.String(),
    message: Type.String(),
    orderId: Type.Integer(),
    descriptor: Type.String(),
    mid: Type.String(),
    threeDSecureId: Type.String(),
    transactionId: Type.String(),
    amount: Type.Number(),
    statusId: Type.Integer(),
    declineSalvage: Type.Boolean(),
    merchantAccountId: Type.Integer(),
    midPortalUrl: Type.String(),
    bin: Type.String(),
    binCountry: Type.String(),
    last4: Type.String(),
    eci: Type.String(),
    networkTokenized: Type.Boolean(),
    submitOrderId: Type.Integer(),
    mobileWalletA: Type.Boolean(),
    mobileWalletB: Type.Boolean(),
    gatewayResponses: Type.Array(Type.Object({ gateway: Type.String(), httpStatus: Type.Integer(), response: Type.String() })),
    subscriptionId: Type.Integer(),
  },
  { $id: 'SubmitResult', description: 'Every processed outcome, approved, declined or 3-D Secure pending (spec 2.3)' },
);

// No length limit of its own: any id that names no product of the key's tenant is 404 (DESIGN 4), however long.
const ProductParams = Type.Object({ productId: Type.String({ description: 'Id of the product (404 when it names none of the key\'s tenant)', examples: ['42'] }) });
const PaymentHeaders = Type.Object({
  'Idempotency-Key': idempotencyKeyHeader('Makes a submit safe to retry: the same key and body return the first result'),
});
const paymentResponses = { 200: ref(SubmitResult), ...errorResponses(400, 401, 404, 409, 410, 413, 415, 429, 500, 503) };

const submitExample = {
  card: { name: 'Ada Lovelace', pan: '4242424242424242', expiryMonth: 12, expiryYear: 2030, cvv: '123' },
  email: 'ada@example.com',
  partnerSession: 'checkout-7f3a',
  address: { firstName: 'Ada', lastName: 'Lovelace', street: '1 Main St', city: 'London', zip: 'N1', country: 'GB' },
};

export interface PaymentRouteDeps {
  readonly runner: PaymentRunner;
  readonly cardVault: CardVault;
  readonly secretBox: SecretBox;
  readonly settings: PaymentSettings;
  /** Where submits find their product (the gateway's product cache). */
  readonly products: ProductLookup;
}

export function paymentRoutes(app: TypedApp, deps: PaymentRouteDeps): void {
  app.addSchema(SubmitResult);

  app.post('/api/:productId', {
    schema: {
      operationId: 'submitPayment',
      summary: 'Card payment submit for a product (spec 4.1); every processed outcome is HTTP 200',
      tags: ['payments'],
      security: API_KEY_REQUIRED,
      params: ProductParams,
      headers: PaymentHeaders,
      body: { ...SubmitRequest, examples: [submitExample] },
      response: paymentResponses,
    },
    async handler(request) {
      const principal = callerOf(request);
      const idempotencyKey = idempotencyKeyOf(request);
      return submitPayment(
        { em: request.em, cardVault: deps.cardVault, secretBox: deps.secretBox, runner: deps.runner, settings: deps.settings, products: deps.products },
        { tenantId: principal.tenantId, productId: request.params.productId, body: request.body, idempotencyKey },
      );
    },
  });

  app.post('/api/:productId/3ds', {
    schema: {
      operationId: 'completeThreeDSecure',
      summary: 'Completes a Pending 3-D Secure payment (spec 4.2); same result schema as the submit',
      tags: ['payments'],
      security: API_KEY_REQUIRED,
      params: ProductParams,
      body: ThreeDSecureRequest,
      response: paymentResponses,
    },
    async handler(request) {
      const principal = callerOf(request);
      return completeThreeDSecure(
        { em: request.em, runner: deps.runner },
        { tenantId: principal.tenantId, productId: request.params.productId, body: request.body },
      );
    },
  });

  // The cardholder's browser follows this link, so it carries no key: the id is the capability.
  app.get('/3ds/:threeDSecureId', {
    schema: {
      operationId: 'openThreeDSecureChallenge',
      summary: 'Redirects a browser to the 3-D Secure challenge of a Pending payment',
      tags: ['payments'],
      security: PUBLIC,
      params: Type.Object({ threeDSecureId: Type.String({ maxLength: 64 }) }),
      response: {
        302: Type.Null({ description: 'Redirect to the challenge page', headers: { location: Type.String({ format: 'uri', description: 'The challenge page' }) } }),
        ...errorResponses(400, 404, 410),
      },
    },
    async handler(request, reply) {
      const challenge = await findChallengeRedirect(request.em, request.params.threeDSecureId);
      if (!challenge?.challengeUrl) throw new DomainError('not_found', 'Unknown threeDSecureId');
      if (!challenge.pending) throw new DomainError('gone', 'This 3-D Secure session is no longer pending');
      return reply.redirect(challenge.challengeUrl, 302);
    },
  });
}
