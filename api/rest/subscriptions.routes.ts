import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { SubscriptionView } from '../../data/queries/rebills.ts';
import { resourceMissing } from '../../domain/payments-api/errors.ts';
import { toMinorUnits } from '../../domain/payments-api/minor-units.ts';
import { SUBSCRIPTION_ACTIONS, type SubscriptionAction, type SubscriptionController } from '../../domain/subscriptions/subscription-controller.ts';
import type { DeliveryStarter } from '../../domain/webhooks/delivery-starter.ts';
import { controlSubscription, findSubscriptionOf } from '../../services/subscriptions/control-subscription.ts';
import { actOnce } from '../../services/idempotency/idempotent-action.ts';
import { callerOf } from '../http/authentication.ts';
import { ActionIdempotencyHeaders, idempotencyKeyOf } from '../http/idempotency-key.ts';
import { NoParametersBody, optionalBody } from '../http/no-parameters.ts';
import { ref } from '../http/schemas.ts';
import { API_KEY_REQUIRED } from '../http/security.ts';
import { PaymentApiErrorResponse, sendPaymentApiError } from './payments-api-errors.ts';

const Nullable = <T extends ReturnType<typeof Type.Integer>>(schema: T) => Type.Union([schema, Type.Null()]);

export const SubscriptionObject = Type.Object(
  {
    id: Type.Integer(),
    object: Type.Literal('subscription'),
    status: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('grace'), Type.Literal('cancelled')], {
      description: '`grace` while a declined rebill waits for its dunning retry',
    }),
    paused: Type.Boolean(),
    pause_reason: Type.Union([Type.Literal('charge_uncertain'), Type.Null()], {
      description: 'Why the gateway paused billing: `charge_uncertain` (a failed rebill may have charged the card: a resume asks the processor about its order first, and the period is charged anew only if it charged nothing; or cancel); null when not paused or paused on request',
    }),
    product: Type.Integer(),
    email: Type.String(),
    amount: Type.Integer({ description: "Recurring amount in the currency's minor units (500 JPY is 500 yen)" }),
    currency: Type.String(),
    billed_periods: Type.Integer({ description: 'Periods paid after the first payment' }),
    next_billing: Type.Integer({ description: 'Unix seconds of the next charge (or dunning retry); once cancelled, when it would have been (nothing is charged after a cancel: read status)' }),
    grace_until: Nullable(Type.Integer()),
    cancelled_at: Nullable(Type.Integer()),
    cancel_reason: Type.Union([Type.String(), Type.Null()], { description: '`cancelled_by_merchant`, `hard_decline`, `retries_exhausted`, `no_card_on_file` (no card was kept for rebills) or `blocked` (its card or e-mail was blocklisted after the checkout)' }),
    created: Type.Integer(),
    // Optional: an action's answer kept under its Idempotency-Key before this field existed is replayed as it was.
    pending_action: Type.Optional(
      Type.Union([Type.Literal('cancel'), Type.Literal('pause'), Type.Literal('resume'), Type.Null()], {
        description:
          "In a cancel's, pause's or resume's answer: that action, accepted but not in effect yet because a rebill is in flight (it takes effect when that charge ends; `status` and `paused` show the subscription as it is now). Null when in effect, and in every read",
      }),
    ),
  },
  { $id: 'Subscription', description: 'A subscription and where its recurring billing stands' },
);

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

function subscriptionJson(s: SubscriptionView, pendingAction: SubscriptionAction | null = null): Static<typeof SubscriptionObject> {
  return {
    id: s.id,
    object: 'subscription',
    status: s.state as 'active',
    paused: s.pausedAt !== null,
    pause_reason: s.pausedAt !== null ? s.pauseReason : null,
    product: s.productId,
    email: s.email,
    amount: toMinorUnits(s.recurringAmount, s.currency),
    currency: s.currency,
    billed_periods: s.billedPeriods,
    next_billing: seconds(s.nextBillingAt),
    grace_until: s.graceUntil && seconds(s.graceUntil),
    cancelled_at: s.cancelledAt && seconds(s.cancelledAt),
    cancel_reason: s.cancelReason,
    created: seconds(s.createdAt),
    pending_action: pendingAction,
  };
}

const Params = Type.Object({ id: Type.String({ pattern: '^[1-9][0-9]{0,9}$', description: 'Subscription id (`subscriptionId` of the submit result)', examples: ['17'] }) });
/** The id as a number; beyond the id column's range it names no subscription (404, naming the id asked for). */
function idOf(text: string): number {
  const id = Number(text);
  if (id > 2_147_483_647) throw resourceMissing('subscription', text);
  return id;
}
const errors = {
  400: ref(PaymentApiErrorResponse, { description: 'Invalid request, or the subscription cannot take this action (`subscription_not_active`)' }),
  401: ref(PaymentApiErrorResponse, { description: 'Missing or unknown API key' }),
  404: ref(PaymentApiErrorResponse, { description: 'No such subscription for this key' }),
  429: ref(PaymentApiErrorResponse, { description: 'Rate limit of the API key exceeded' }),
  500: ref(PaymentApiErrorResponse, { description: 'Unexpected error' }),
  503: ref(PaymentApiErrorResponse, {
    description:
      'Temporal, which bills the subscription, could not be reached, or billing did not take a pause or resume in time (no worker ran it): `still_processing`, and it may still take effect; retry with the same Idempotency-Key. A read that met an outage, or a request that came while the gateway stops, is `service_unavailable`: nothing was taken; send it again',
  }),
};
/** An action's Idempotency-Key used with another request, or while its first request runs. */
const keyErrors = { 409: ref(PaymentApiErrorResponse, { description: 'Idempotency-Key reused with another action or subscription, or its first request is still running' }) };
/** The actions take a body (an empty one, or none): what any body may be refused with. */
const bodyErrors = {
  413: ref(PaymentApiErrorResponse, { description: 'Request body too large' }),
  415: ref(PaymentApiErrorResponse, { description: 'Content-Type must be application/json (or no body at all)' }),
};

/**
 * Subscriptions over REST (beside the GraphQL admin API): read one, and cancel, pause or resume its recurring
 * billing through its workflow. Errors use the generic card API's error object.
 */
export function subscriptionRoutes(app: FastifyInstance, deps: { controller: SubscriptionController; deliveries: DeliveryStarter; actionKeyAbandonedAfterSeconds: number }): void {
  app.addSchema(SubscriptionObject);
  app.register(async (plain) => {
    plain.setErrorHandler((error, request, reply) => sendPaymentApiError(request, reply, error));
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();

    scope.get('/subscriptions/:id', {
      schema: { operationId: 'getSubscription', summary: 'A subscription of the key’s tenant', tags: ['payments'], security: API_KEY_REQUIRED, params: Params, response: { 200: ref(SubscriptionObject), ...errors } },
      async handler(request) {
        const principal = callerOf(request);
        return subscriptionJson(await findSubscriptionOf(request.em, principal.tenantId, idOf(request.params.id)));
      },
    });

    for (const action of SUBSCRIPTION_ACTIONS) {
      scope.post(`/subscriptions/:id/${action}`, {
        schema: {
          operationId: `${action}Subscription`,
          summary:
            action === 'cancel'
              ? 'Cancels a subscription: no further rebills (one already running completes)'
              : action === 'pause'
                ? 'Pauses recurring billing until resumed'
                : 'Resumes a paused subscription; a period that fell due meanwhile is billed at once',
          tags: ['payments'],
          security: API_KEY_REQUIRED,
          params: Params,
          headers: ActionIdempotencyHeaders,
          body: NoParametersBody,
          response: { 200: ref(SubscriptionObject), ...errors, ...bodyErrors, ...keyErrors },
        },
        ...optionalBody,
        async handler(request) {
          const principal = callerOf(request);
          const keyed = { tenantId: principal.tenantId, key: idempotencyKeyOf(request), action, target: `subscription ${request.params.id}` };
          const control = { em: request.em, controller: deps.controller, deliveries: deps.deliveries, logger: request.log };
          return actOnce({ em: request.em, logger: request.log, abandonedAfterSeconds: deps.actionKeyAbandonedAfterSeconds }, keyed, async () => {
            const controlled = await controlSubscription(control, { tenantId: principal.tenantId, subscriptionId: idOf(request.params.id), action });
            return subscriptionJson(controlled, controlled.pendingAction);
          });
        },
      });
    }
  });
}
