import { Type } from '@sinclair/typebox';
import { authenticateApiKey } from '../../services/auth/authenticate-api-key.ts';
import { completeThreeDSecure } from '../../services/payments/complete-three-d-secure.ts';
import { SUBMIT_INFOS } from '../../domain/payments/submit-result.ts';
import { findChallengeRedirect } from '../../data/queries/three-d-secure.ts';
import { submitPayment } from '../../services/payments/submit-payment.ts';
import type { PaymentRunner } from '../../domain/payments/payment-runner.ts';
import { SubmitRequest, ThreeDSecureRequest, type ThreeDSecureRequest as ThreeDSecureBody, type SubmitRequest as SubmitBody } from '../../domain/payments/submit-request.schema.ts';
import { consumeRateLimit } from '../../services/rate-limit/rate-limiter.ts';
import { DomainError } from '../../domain/errors.ts';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import type { PaymentSettings } from '../../domain/payments/payment-input.ts';
import { defineRoute } from '../http/route.ts';
import { ErrorResponse } from '../http/schemas.ts';
import type { FastifyRequest } from 'fastify';

const SubmitResultSchema = Type.Object(
  {
    serviceSession: Type.String(),
    partnerSession: Type.String(),
    subscribeSuccess: Type.Boolean(),
    chargeSuccess: Type.Boolean(),
    info: Type.Union(SUBMIT_INFOS.map((info) => Type.Literal(info))),
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
  { description: 'Every processed outcome, including declines and 3-D Secure pending (spec 2.3)' },
);

const ProductParams = Type.Object({ productId: Type.String({ maxLength: 20, description: 'Id of the product' }) });
const PaymentHeaders = Type.Object({
  authorization: Type.String({ description: 'API key, raw or `Bearer <key>`' }),
  'idempotency-key': Type.Optional(Type.String({ maxLength: 255, description: 'Makes a submit safe to retry: the same key and body return the first result' })),
});
const paymentErrors = { 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 410: ErrorResponse, 413: ErrorResponse, 429: ErrorResponse, 500: ErrorResponse };

export interface PaymentRouteDeps {
  readonly runner: PaymentRunner;
  readonly cardVault: CardVault;
  readonly secretBox: SecretBox;
  readonly settings: PaymentSettings;
  readonly defaultRateLimitPerMinute: number;
}

export function paymentRoutes(deps: PaymentRouteDeps) {
  async function authenticate(request: FastifyRequest) {
    const principal = await authenticateApiKey(request.em, request.headers.authorization);
    await consumeRateLimit(request.em, `api-key:${principal.apiKeyId}`, principal.rateLimitPerMinute ?? deps.defaultRateLimitPerMinute);
    return principal;
  }

  return [
    defineRoute({
      method: 'POST',
      url: '/api/:productId',
      operationId: 'submitPayment',
      summary: 'Card payment submit for a product (spec 4.1); every processed outcome is HTTP 200',
      tags: ['payments'],
      auth: 'none',
      schema: { params: ProductParams, headers: PaymentHeaders, body: SubmitRequest, response: { 200: SubmitResultSchema, ...paymentErrors } },
      async handler(request) {
        const principal = await authenticate(request);
        const idempotencyKey = request.headers['idempotency-key'];
        if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey.length < 1 || idempotencyKey.length > 255)) {
          throw new DomainError('validation', 'Idempotency-Key must be 1 to 255 characters', { field: 'Idempotency-Key' });
        }
        return submitPayment(
          { em: request.em, cardVault: deps.cardVault, secretBox: deps.secretBox, runner: deps.runner, settings: deps.settings },
          { tenantId: principal.tenantId, productId: (request.params as { productId: string }).productId, body: request.body as SubmitBody, idempotencyKey },
        );
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/api/:productId/3ds',
      operationId: 'completeThreeDSecure',
      summary: 'Completes a Pending 3-D Secure payment (spec 4.2); same result schema as the submit',
      tags: ['payments'],
      auth: 'none',
      schema: { params: ProductParams, headers: PaymentHeaders, body: ThreeDSecureRequest, response: { 200: SubmitResultSchema, ...paymentErrors } },
      async handler(request) {
        const principal = await authenticate(request);
        return completeThreeDSecure(
          { em: request.em, runner: deps.runner },
          { tenantId: principal.tenantId, productId: (request.params as { productId: string }).productId, body: request.body as ThreeDSecureBody },
        );
      },
    }),
  ];
}

/** Opens the processor's 3-D Secure challenge for a Pending payment: the checkout sends the cardholder here. */
export const threeDSecureChallengeRoute = defineRoute({
  method: 'GET',
  url: '/3ds/:threeDSecureId',
  operationId: 'openThreeDSecureChallenge',
  summary: 'Redirects a browser to the 3-D Secure challenge of a Pending payment',
  tags: ['payments'],
  auth: 'none',
  schema: {
    params: Type.Object({ threeDSecureId: Type.String({ maxLength: 64 }) }),
    response: { 302: Type.Null({ description: 'Location: the challenge page' }), 404: ErrorResponse, 410: ErrorResponse },
  },
  async handler(request, reply) {
    const { threeDSecureId } = request.params as { threeDSecureId: string };
    const challenge = await findChallengeRedirect(request.em, threeDSecureId);
    if (!challenge?.challengeUrl) throw new DomainError('not_found', 'Unknown threeDSecureId');
    if (!challenge.pending) throw new DomainError('gone', 'This 3-D Secure session is no longer pending');
    return reply.redirect(challenge.challengeUrl, 302);
  },
});
