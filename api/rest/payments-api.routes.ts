import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { findPayment, listPayments } from '../../data/queries/payments-api.ts';
import { listRefundsOfOrder } from '../../data/queries/refunds.ts';
import type { CardVault } from '../../domain/crypto/card-vault.ts';
import { PaymentApiError, resourceMissing } from '../../domain/payments-api/errors.ts';
import { orderIdOf, paymentId } from '../../domain/payments-api/ids.ts';
import type { RefundRunner } from '../../domain/payments-api/refund-outcome.ts';
import type { PaymentSettings } from '../../domain/payments/payment-input.ts';
import { PaymentNotRecordedYetError, type PaymentRunner } from '../../domain/payments/payment-runner.ts';
import { createPayment } from '../../services/payments-api/create-payment.ts';
import type { ProductLookup } from '../../services/catalog/product-cache.ts';
import { decideAuthorization } from '../../services/payments-api/decide-authorization.ts';
import { actOnce } from '../../services/idempotency/idempotent-action.ts';
import { requestRefund } from '../../services/refunds/request-refund.ts';
import { callerOf } from '../http/authentication.ts';
import { ActionIdempotencyHeaders, idempotencyKeyHeader, idempotencyKeyOf } from '../http/idempotency-key.ts';
import { NoParametersBody, bodyMayBeLeftOut, optionalBody } from '../http/no-parameters.ts';
import { readJsonBodies } from '../http/json-bodies.ts';
import { ref } from '../http/schemas.ts';
import { API_KEY_REQUIRED } from '../http/security.ts';
import { PaymentApiErrorResponse, sendPaymentApiError } from './payments-api-errors.ts';
import { paymentJson, refundJson, statesOf } from './payments-api.json.ts';
import { CreatePaymentBody, Payment, PaymentList, PaymentListQuery, Refund, RefundBody } from './payments-api.schemas.ts';

export interface PaymentsApiRouteDeps {
  readonly runner: PaymentRunner;
  readonly refundRunner: RefundRunner;
  readonly cardVault: CardVault;
  readonly settings: PaymentSettings;
  /** Where payments find their product (the gateway's product cache). */
  readonly products: ProductLookup;
  /** Where browsers reach the gateway (3-D Secure redirects); default the address the request came to. */
  readonly publicBaseUrl?: string;
  /** When a capture's or void's Idempotency-Key claimed by a request that died may be taken over (`abandonedActionAfterSeconds`). */
  readonly actionKeyAbandonedAfterSeconds: number;
}

const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, ref(PaymentApiErrorResponse, { description: ERROR_DESCRIPTIONS[status] ?? 'Refused' })]));
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (`invalid_request_error`); `param` names the parameter',
  401: 'Missing or unknown API key',
  402: 'Refused for the card (`card_error`: invalid card, blocked, velocity; a capture or void the processor refused, with its `status_id`) or a refund over the captured amount (`status_id` 4313)',
  404: 'No such payment for this key (`resource_missing`)',
  409: 'Idempotency-Key reused with another request, or its first request is still running',
  413: 'Request body too large',
  415: 'Content-Type must be application/json (UTF-8, uncompressed)',
  429: 'Rate limit of the API key exceeded',
  500: 'Unexpected error; nothing is known to have changed',
  503: 'Still processing (`still_processing`: Temporal or PostgreSQL away, or the answer not in time): retry with the same Idempotency-Key to get the result; a payment that goes on is named in `payment_id`, and `GET /payments/{payment_id}` gives its outcome without a key. Or nothing was taken (`service_unavailable`: the gateway busy or stopping, a refund that could not be started): send it again',
};

/** A read's 503: it takes nothing, so it is never `still_processing` (but for a payment started and not recorded yet). */
const readUnavailable = () =>
  ref(PaymentApiErrorResponse, { description: 'The database could not be reached, or the gateway is stopping (`service_unavailable`, `Retry-After`): ask again' });

const IdempotencyHeaders = Type.Object({
  'Idempotency-Key': idempotencyKeyHeader('Makes the POST safe to retry: the same key and body answer the first result and never charge (or refund) twice'),
});
const PaymentParams = Type.Object({ id: Type.String({ maxLength: 40, description: 'Payment id', examples: ['pay_1042'] }) });

/**
 * The generic card API (spec 4.11), Stripe-style: `POST /payments`, `GET /payments/{id}`, `GET /payments` and
 * `POST /payments/{id}/refund`. Payments run through the submit route's durable payment workflow; refunds through
 * the refund workflow. Failures use this API's own error object, so the routes live in their own scope.
 */
export function paymentsApiRoutes(app: FastifyInstance, deps: PaymentsApiRouteDeps): void {
  app.addSchema(PaymentApiErrorResponse);
  app.addSchema(Payment);
  app.addSchema(PaymentList);
  app.addSchema(Refund);
  app.register(async (plain) => {
    plain.setErrorHandler((error, request, reply) => sendPaymentApiError(request, reply, error));
    // Amounts are whole minor units: one written with digits a double cannot hold is refused, never rounded.
    readJsonBodies(plain, { inexactWholeNumbers: true });
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    const publicUrl = (request: FastifyRequest) => (deps.publicBaseUrl ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '');
    const loadPayment = async (request: FastifyRequest, tenantId: number, id: string) => {
      const orderId = orderIdOf(id);
      const payment = orderId === undefined ? undefined : await findPayment(request.em, tenantId, orderId);
      if (!payment) {
        // Started and not recorded yet (a 503 named it): "ask again", never "no such payment", which means "pay again".
        if (orderId !== undefined && (await deps.runner.isStarting(tenantId, orderId))) throw new PaymentNotRecordedYetError(id);
        throw resourceMissing('payment', id);
      }
      return paymentJson(payment, publicUrl(request));
    };

    scope.post('/payments', {
      schema: {
        operationId: 'createPayment',
        summary: 'Creates and charges a card payment (same durable process as the submit route: MID selection, velocity, cascade, 3-D Secure)',
        description:
          'Answers the payment, approved or declined (HTTP 200 with `status`); a payment waiting for 3-D Secure is `requires_action` with `next_action`, ' +
          'completed through `POST /api/{productId}/3ds` with its `three_d_secure_id` and `serviceSession` = the payment id. A refusal before processing is an error object.',
        tags: ['payments'],
        security: API_KEY_REQUIRED,
        headers: IdempotencyHeaders,
        body: {
          ...CreatePaymentBody,
          examples: [{ amount: 1999, currency: 'USD', card: { number: '4242424242424242', exp_month: 12, exp_year: 2030, cvc: '123', name: 'Ada Lovelace' }, email: 'ada@example.com' }],
        },
        response: { 200: ref(Payment), ...errors(400, 401, 402, 404, 409, 413, 415, 429, 500, 503) },
      },
      async handler(request) {
        const principal = callerOf(request);
        const orderId = await createPayment(
          { em: request.em, cardVault: deps.cardVault, runner: deps.runner, settings: deps.settings, products: deps.products },
          { tenantId: principal.tenantId, body: request.body, idempotencyKey: idempotencyKeyOf(request) },
        );
        const payment = await findPayment(request.em, principal.tenantId, orderId);
        // A payment that failed before its order was written (a step failing for good): nothing was sent.
        if (!payment) throw new PaymentApiError('api_error', 'payment_not_recorded', 'The payment failed before it was recorded; nothing was charged');
        return paymentJson(payment, publicUrl(request));
      },
    });

    scope.get('/payments/:id', {
      schema: {
        operationId: 'getPayment',
        summary: 'Retrieves a payment of the key’s tenant',
        tags: ['payments'],
        security: API_KEY_REQUIRED,
        params: PaymentParams,
        response: {
          200: ref(Payment),
          ...errors(400, 401, 404, 429, 500),
          503: ref(PaymentApiErrorResponse, {
            description:
              'The payment has started and is not recorded yet (`still_processing`, `Retry-After`): ask again; or the database could not be reached, or the gateway is stopping (`service_unavailable`)',
          }),
        },
      },
      async handler(request) {
        const principal = callerOf(request);
        return loadPayment(request, principal.tenantId, request.params.id);
      },
    });

    scope.get('/payments', {
      schema: {
        operationId: 'listPayments',
        summary: 'Lists payments, newest first, filtered by status, creation time, amount, e-mail and MID (every filter given must match)',
        tags: ['payments'],
        security: API_KEY_REQUIRED,
        querystring: PaymentListQuery,
        response: { 200: ref(PaymentList), ...errors(400, 401, 404, 429, 500), 503: readUnavailable() },
      },
      async handler(request) {
        const principal = callerOf(request);
        const query = request.query;
        const limit = query.limit ?? 10;
        // A cursor is one of the tenant's own payments, as a refund list's is: another's (or none) is no position.
        const after = query.starting_after === undefined ? undefined : orderIdOf(query.starting_after);
        if (query.starting_after !== undefined && (after === undefined || !(await findPayment(request.em, principal.tenantId, after)))) {
          throw resourceMissing('payment', query.starting_after, 'starting_after');
        }
        const rows = await listPayments(
          request.em,
          principal.tenantId,
          {
            states: query.status ? statesOf(query.status as Parameters<typeof statesOf>[0]) : undefined,
            createdFrom: query['created[gte]'] === undefined ? undefined : new Date(query['created[gte]'] * 1000),
            // Up to the end of that second: times are kept to the microsecond, `created` shows whole seconds.
            createdBeforeSeconds: query['created[lte]'] === undefined ? undefined : query['created[lte]'] + 1,
            amountFrom: query['amount[gte]'],
            amountTo: query['amount[lte]'],
            email: query.email,
            mid: query.mid,
            beforeOrderId: after,
          },
          limit + 1,
        );
        const url = publicUrl(request);
        return { object: 'list' as const, url: '/payments' as const, has_more: rows.length > limit, data: rows.slice(0, limit).map((row) => paymentJson(row, url)) };
      },
    });

    scope.post('/payments/:id/refund', {
      schema: {
        operationId: 'refundPayment',
        summary: 'Refunds all or part of a succeeded payment (a durable refund workflow); refunds never total more than the captured amount',
        description: 'Answers the refund once the processor settled it, or `pending` when it is slow (the refund goes on). Over the refundable amount: HTTP 402, `credit_exceeds_original_amount`, `status_id` 4313.',
        tags: ['payments'],
        security: API_KEY_REQUIRED,
        headers: IdempotencyHeaders,
        params: PaymentParams,
        body: { ...RefundBody, examples: [{ amount: 500, reason: 'requested_by_customer' }] },
        response: { 200: ref(Refund), ...errors(400, 401, 402, 404, 409, 413, 415, 429, 500, 503) },
      },
      // Every field is optional (no amount: a full refund), so no body at all is a full refund too, as for capture and void.
      // An empty body sent as JSON is not (`optionalBody`): there the client meant a body, and losing it must not refund
      // everything; it stays malformed JSON.
      preValidation: bodyMayBeLeftOut,
      async handler(request) {
        const principal = callerOf(request);
        const refund = await requestRefund(
          { em: request.em, runner: deps.refundRunner, settings: deps.settings },
          { tenantId: principal.tenantId, paymentId: request.params.id, amount: request.body?.amount, reason: request.body?.reason, idempotencyKey: idempotencyKeyOf(request) },
        );
        return refundJson(refund);
      },
    });

    for (const decision of ['capture', 'void'] as const) {
      scope.post(`/payments/:id/${decision}`, {
        schema: {
          operationId: decision === 'capture' ? 'capturePayment' : 'voidPayment',
          summary:
            decision === 'capture'
              ? 'Captures an authorization made with `capture: false` (status `requires_capture` → `succeeded`)'
              : 'Voids an authorization made with `capture: false` before capture (status `requires_capture` → `canceled`), or cancels a payment waiting on its 3-D Secure challenge (`requires_action` → `canceled`)',
          description:
            (decision === 'void'
              ? 'A void of a `requires_action` payment closes its challenge (`status_id` 4166; the cardholder\'s completion is then 410), unless a completion already under way decides first; a payment that ended uncharged another way (`canceled` by an expiry) is answered as it is. '
              : 'A `requires_action` payment is refused until its challenge is completed. ') +
            'A payment with no authorization waiting (declined, failed, or charged at once with `capture: true`) is refused (`payment_not_authorized`); asking again what is already done (capturing a captured hold, voiding a voided one) answers the payment unchanged. A decision the processor refuses (authorization expired, voided or captured there) is 402 `card_error` `capture_declined` / `void_declined` with its `status_id`; the payment has then ended as the processor said.',
          tags: ['payments'],
          security: API_KEY_REQUIRED,
          params: PaymentParams,
          headers: ActionIdempotencyHeaders,
          body: NoParametersBody,
          response: { 200: ref(Payment), ...errors(400, 401, 402, 404, 409, 413, 415, 429, 500, 503) },
        },
        ...optionalBody,
        async handler(request) {
          const principal = callerOf(request);
          // An id that names no payment is refused before a key is claimed: the key's row never holds what the caller
          // typed (a card number pasted as the id).
          const orderId = orderIdOf(request.params.id);
          if (orderId === undefined) throw resourceMissing('payment', request.params.id);
          const keyed = { tenantId: principal.tenantId, key: idempotencyKeyOf(request), action: decision, target: `payment pay_${orderId}` };
          return actOnce({ em: request.em, logger: request.log, abandonedAfterSeconds: deps.actionKeyAbandonedAfterSeconds }, keyed, async () => {
            const decided = await decideAuthorization({ em: request.em, runner: deps.runner }, { tenantId: principal.tenantId, paymentId: request.params.id, decision });
            return loadPayment(request, principal.tenantId, `pay_${decided}`);
          });
        },
      });
    }

    scope.get('/payments/:id/refunds', {
      schema: {
        operationId: 'listPaymentRefunds',
        summary: 'The refunds of a payment, oldest first',
        tags: ['payments'],
        security: API_KEY_REQUIRED,
        params: PaymentParams,
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
            starting_after: Type.Optional(Type.String({ pattern: '^re_[0-9a-f]{32}$', description: 'Cursor: the last refund id of the previous page' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ object: Type.Literal('list'), url: Type.String({ description: 'The path of this list' }), has_more: Type.Boolean(), data: Type.Array(ref(Refund)) }),
          ...errors(400, 401, 404, 429, 500),
          503: readUnavailable(),
        },
      },
      async handler(request) {
        const principal = callerOf(request);
        const orderId = orderIdOf(request.params.id);
        const payment = orderId === undefined ? undefined : await findPayment(request.em, principal.tenantId, orderId);
        if (!payment || orderId === undefined) throw resourceMissing('payment', request.params.id);
        const { limit = 10, starting_after: startingAfter } = request.query;
        const page = await listRefundsOfOrder(request.em, principal.tenantId, orderId, { limit, startingAfter });
        // A cursor that names none of this payment's refunds is refused: read as "from the start" it would loop a client.
        if (!page) throw resourceMissing('refund', startingAfter!, 'starting_after');
        return { object: 'list' as const, url: `/payments/${paymentId(orderId)}/refunds`, has_more: page.hasMore, data: page.refunds.map(refundJson) };
      },
    });
  });
}

