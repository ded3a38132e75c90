import { Type, type Static } from '@sinclair/typebox';
import { ANY_RECORD_KEY } from '../../domain/validation/json-schema.ts';

/** Schemas of the generic `/payments` API: they validate requests and write the OpenAPI document. */

/**
 * The largest amount of any currency in minor units: 99,999,999,999.990 of a three-decimal one. Each currency's own
 * bound (99,999,999,999.99 of its major unit) is checked with its decimals, naming it.
 */
const LARGEST_MINOR_AMOUNT = 99_999_999_999_990;
/** At most 99,999,999,999.99 of the currency, checked in code against the currency's own minor units (the 400 names its limit). */
const MinorAmount = (description: string) => Type.Integer({ minimum: 1, description: `${description}; at most 99999999999.99 of the currency (9999999999999 USD cents, 99999999999 JPY)`, examples: [1999] });

export const CreatePaymentBody = Type.Object(
  {
    amount: MinorAmount("Amount to charge in the currency's minor units: 1999 is 19.99 USD, 500 is 500 JPY (no minor unit), 1230 is 1.230 KWD (three decimals: must end in 0, the gateway charges hundredths); ISK counts hundredths, as Stripe's API does, and must end in 00 (50000 is 500 ISK, whole krónur only)"),
    currency: Type.String({ format: 'currency', description: 'ISO 4217 code, upper case, of a currency cards are charged in (not a fund, metal or test code, nor CLF or UYW)', examples: ['USD'] }),
    card: Type.Object(
      {
        number: Type.String({ minLength: 1, maxLength: 23, description: 'The card number (PAN); never stored or returned' }),
        exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
        exp_year: Type.Integer({ minimum: 0, maximum: 9999, description: 'Four digits (two are read as 20xx)' }),
        cvc: Type.String({ minLength: 1, maxLength: 4, description: 'Never stored' }),
        name: Type.Optional(Type.String({ maxLength: 100, description: 'Cardholder name (as on the submit route)' })),
      },
      { additionalProperties: false },
    ),
    email: Type.String({ minLength: 1, maxLength: 320, description: "The customer's e-mail address" }),
    mid: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Forces this merchant account instead of the gateway selecting one' })),
    product: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "Books the payment under this product of the tenant (its velocity limits and accepted networks apply); default the tenant's `payments-api` product" })),
    capture: Type.Optional(Type.Boolean({ description: '`false`: authorize only (`requires_capture`); capture with `POST /payments/{id}/capture` or release with `/void`; never captured, it is voided after the configured hold period' })),
    cascade: Type.Optional(Type.Boolean({ description: 'Retry a cascadable decline once on another merchant account' })),
    three_d_secure: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          cancel_on_fail: Type.Optional(Type.Boolean({ description: 'Decline when authentication fails (default true) instead of charging without liability shift' })),
        },
        { additionalProperties: false },
      ),
    ),
    partner_session: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "The caller's checkout session, echoed in webhooks and used for lead matching (50 characters or fewer are stored)" })),
    // A record's key schema is a pattern to a validator: `propertyNames` holds the keys' length, and the pattern takes
    // every key (`.` would miss one holding a line break, leaving its value unchecked).
    metadata: Type.Optional(
      Type.Record(Type.String({ pattern: ANY_RECORD_KEY }), Type.String({ maxLength: 500 }), { maxProperties: 50, propertyNames: { minLength: 1, maxLength: 40 }, description: 'Your key-value pairs (keys 1 to 40 characters), kept on the order' }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePaymentBody = Static<typeof CreatePaymentBody>;

export const PAYMENT_STATUSES = ['processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled'] as const;

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const Payment = Type.Object(
  {
    id: Type.String({ description: '`pay_` + the submit order id', examples: ['pay_1042'] }),
    object: Type.Literal('payment'),
    created: Type.Integer({ description: 'Unix time in seconds' }),
    status: Type.Union(PAYMENT_STATUSES.map((s) => Type.Literal(s)), {
      description:
        '`succeeded` charged; `failed` declined or ended in error; `requires_action` waits for a 3-D Secure challenge (`next_action`); `requires_capture` authorized with `capture: false`, waiting for `/capture` or `/void`; `canceled` voided or the challenge expired; `processing` still deciding',
    }),
    amount: Type.Integer({ description: 'Minor units' }),
    currency: Type.String(),
    amount_refunded: Type.Integer({ description: 'Minor units refunded so far' }),
    amount_refundable: Type.Integer({ description: 'Minor units that may still be refunded (refunds in flight count as taken)' }),
    refunded: Type.Boolean({ description: 'True once the whole amount is refunded' }),
    email: Type.String(),
    product: Type.Integer(),
    mid: Type.Union([Type.String(), Type.Null()]),
    merchant_account: Type.Union([Type.Integer(), Type.Null()]),
    transaction_id: Type.Union([Type.String(), Type.Null()], { description: 'The deciding authorization transaction (mitigation search `transactionId`)' }),
    status_id: Type.Union([Type.Integer(), Type.Null()], { description: 'Status code of the deciding attempt (spec 7.5)' }),
    failure_code: Type.Union([Type.String(), Type.Null()], { description: 'When the payment failed: its status code as text, or, when no processor was asked, `already_subscribed`, `no_merchant_account` or `card_network_not_supported`' }),
    failure_message: Nullable(Type.String()),
    card: Type.Union([
      Type.Object({ brand: Type.String(), bin: Type.String(), last4: Type.String(), exp_month: Type.Integer(), exp_year: Type.Integer() }),
      Type.Null(),
    ]),
    next_action: Type.Union([
      Type.Object({ type: Type.Literal('three_d_secure'), three_d_secure_id: Type.String(), redirect_url: Type.String({ description: "Send the cardholder's browser here" }) }),
      Type.Null(),
    ]),
    // Optional: an action's answer stored before payments showed it is replayed as it was.
    metadata: Type.Optional(
      Type.Record(Type.String({ pattern: ANY_RECORD_KEY }), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
        description: 'The key-value pairs kept on the payment as given: `metadata` of `POST /payments` (text), or `props` of a submit (text, numbers, booleans, null); `{}` when none',
      }),
    ),
  },
  {
    $id: 'Payment',
    description: "A card payment (Stripe-style): amounts in the currency's minor units (JPY and other zero-decimal currencies in whole units), one status",
    examples: [
      {
        id: 'pay_1042', object: 'payment', created: 1795000000, status: 'succeeded', amount: 1999, currency: 'USD', amount_refunded: 500, amount_refundable: 1499, refunded: false,
        email: 'ada@example.com', product: 7, mid: 'MID-A', merchant_account: 3, transaction_id: '0b0c1d7e-7b6f-4d5e-9a77-0f3e2b1c4d5a', status_id: 2636,
        failure_code: null, failure_message: null, card: { brand: 'NetworkA', bin: '42424242', last4: '4242', exp_month: 12, exp_year: 2030 }, next_action: null,
        metadata: { order_ref: 'A-1001' },
      },
    ],
  },
);
export type Payment = Static<typeof Payment>;

export const PaymentList = Type.Object(
  {
    object: Type.Literal('list'),
    url: Type.Literal('/payments'),
    has_more: Type.Boolean({ description: 'More payments match: ask again with `starting_after` = the last id' }),
    data: Type.Array(Type.Ref('Payment#')),
  },
  { $id: 'PaymentList', description: 'Payments matching every filter, newest first' },
);

/** 9999-12-31T23:59:59Z: a later date has no ISO form PostgreSQL reads (and past 8.64e12 s none in JavaScript). */
const LATEST_UNIX_SECOND = 253_402_300_799;

export const PaymentListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(PAYMENT_STATUSES.map((s) => Type.Literal(s)))),
    'created[gte]': Type.Optional(Type.Integer({ minimum: 0, maximum: LATEST_UNIX_SECOND, description: 'Created at or after (Unix seconds)' })),
    'created[lte]': Type.Optional(Type.Integer({ minimum: 0, maximum: LATEST_UNIX_SECOND, description: 'Created at or before (Unix seconds)' })),
    'amount[gte]': Type.Optional(Type.Integer({ minimum: 0, maximum: LARGEST_MINOR_AMOUNT, description: "Minor units, compared in each payment's own currency (500 takes 5.00 USD and 500 JPY)" })),
    'amount[lte]': Type.Optional(Type.Integer({ minimum: 0, maximum: LARGEST_MINOR_AMOUNT, description: "Minor units, compared in each payment's own currency" })),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    mid: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    starting_after: Type.Optional(Type.String({ pattern: '^pay_[1-9][0-9]{0,9}$', description: 'Cursor: the last payment id of the previous page' })),
  },
  { additionalProperties: false },
);
export type PaymentListQuery = Static<typeof PaymentListQuery>;

export const RefundBody = Type.Object(
  {
    amount: Type.Optional(MinorAmount("The payment currency's minor units to refund; default what is left of the captured amount")),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type RefundBody = Static<typeof RefundBody>;

export const Refund = Type.Object(
  {
    id: Type.String({ examples: ['re_3f9b0c4d2a1e4f6b8c7d9e0f1a2b3c4d'] }),
    object: Type.Literal('refund'),
    created: Type.Integer({ description: 'Unix time in seconds' }),
    payment: Type.String({ description: 'The refunded payment' }),
    amount: Type.Integer({ description: 'Minor units' }),
    currency: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
      description: '`pending` while the processor has not settled it (the refund goes on; GET the payment later)',
    }),
    status_id: Type.Union([Type.Integer(), Type.Null()], { description: 'Status code of the processor refund (spec 7.5)' }),
    failure_message: Type.Union([Type.String(), Type.Null()]),
    transaction_id: Type.Union([Type.String(), Type.Null()], { description: 'The refund transaction (`kind` refund; its `originalTransactionId` is the charge)' }),
    original_transaction_id: Type.String(),
    reason: Type.Union([Type.String(), Type.Null()]),
  },
  {
    $id: 'Refund',
    description: 'A refund of (part of) a payment',
    examples: [
      {
        id: 're_3f9b0c4d2a1e4f6b8c7d9e0f1a2b3c4d', object: 'refund', created: 1795000100, payment: 'pay_1042', amount: 500, currency: 'USD', status: 'succeeded', status_id: 2636,
        failure_message: null, transaction_id: '9a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', original_transaction_id: '0b0c1d7e-7b6f-4d5e-9a77-0f3e2b1c4d5a', reason: 'requested_by_customer',
      },
    ],
  },
);
export type Refund = Static<typeof Refund>;
