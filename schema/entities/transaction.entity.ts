import { defineEntity, p } from '@mikro-orm/core';
import { Customer } from './customer.entity.ts';
import { MerchantAccount } from './merchant-account.entity.ts';
import { Order } from './order.entity.ts';
import { Product } from './product.entity.ts';
import { Tenant } from './tenant.entity.ts';

/** Indexes of the mitigation search (`data/queries/mitigation.ts`), as migration 000012 creates them. */
const MITIGATION_SEARCH_INDEXES = [
  ['transactions_tenant_sent_index', '"tenant_id", "sent_at", "id"'],
  ['transactions_tenant_email_sent_index', '"tenant_id", "email", "sent_at", "id"'],
  ['transactions_merchant_account_sent_index', '"merchant_account_id", "sent_at", "id"'],
  ['transactions_tenant_bin6_sent_index', '"tenant_id", left("bin", 6), "sent_at", "id"'],
  ['transactions_tenant_last4_sent_index', '"tenant_id", "last4", "sent_at", "id"'],
  ['transactions_tenant_first_name_sent_index', '"tenant_id", lower("first_name"), "sent_at", "id"'],
  ['transactions_tenant_last_name_sent_index', '"tenant_id", lower("last_name"), "sent_at", "id"'],
  ['transactions_tenant_currency_sent_index', '"tenant_id", "currency", "sent_at", "id"'],
  ['transactions_tenant_sandbox_sent_index', '"tenant_id", "sandbox", "sent_at", "id"'],
  ['transactions_tenant_product_sent_index', '"tenant_id", "product_id", "sent_at", "id"'],
  ['transactions_tenant_amount_sent_index', '"tenant_id", "amount", "sent_at", "id"'],
  ['transactions_tenant_completed_index', '"tenant_id", "completed_at", "id"'],
  ['transactions_order_id_index', '"order_id"'],
].map(([name, columns]) => ({ name, expression: `create index "${name}" on "transactions" (${columns})` }));

const MITIGATION_SPECIAL_INDEXES = [
  {
    name: 'transactions_original_transaction_id_index',
    expression: `create index "transactions_original_transaction_id_index" on "transactions" ("original_transaction_id") where "original_transaction_id" is not null`,
  },
  { name: 'transactions_descriptor_trgm_index', expression: `create index "transactions_descriptor_trgm_index" on "transactions" using gin ("descriptor" gin_trgm_ops)` },
];

export const TRANSACTION_KINDS = ['authorization', 'void', 'refund'] as const;

/**
 * One processing attempt (authorization, void or refund) with what mitigation search needs (spec 2.8).
 * Card data is limited to BIN (8), last 4, brand, expiry, country and a keyed fingerprint.
 */
const TransactionSchema = defineEntity({
  name: 'Transaction',
  tableName: 'transactions',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    order: () => p.manyToOne(Order),
    product: () => p.manyToOne(Product),
    customer: () => p.manyToOne(Customer),
    merchantAccount: () => p.manyToOne(MerchantAccount).nullable(),
    kind: p.enum(() => [...TRANSACTION_KINDS]).default('authorization'),
    /** Processor idempotency key of the attempt (`<order>-<n>`); unique so a replayed activity cannot record twice. */
    reference: p.string().length(100).unique(),
    attemptNumber: p.integer(),
    gateway: p.string().length(64),
    gatewayTransactionId: p.string().length(100).nullable(),
    statusId: p.integer(),
    status: p.string().length(200),
    success: p.boolean(),
    amount: p.decimal('string').precision(14).scale(2),
    currency: p.string().length(3),
    mid: p.string().length(64).nullable(),
    descriptor: p.string().length(255).nullable(),
    authCode: p.string().length(20).nullable(),
    email: p.string().length(320),
    firstName: p.string().length(100).nullable(),
    lastName: p.string().length(100).nullable(),
    bin: p.string().length(8),
    last4: p.string().length(4),
    brand: p.string().length(20),
    binCountry: p.string().length(2).nullable(),
    cardFingerprint: p.string().length(64),
    expiryMonth: p.integer(),
    expiryYear: p.integer(),
    eci: p.string().length(2).nullable(),
    partnerSession: p.string().length(50).nullable(),
    sandbox: p.boolean().default(false),
    refunded: p.boolean().default(false),
    refundable: p.boolean().default(false),
    hasAlert: p.boolean().default(false),
    chargedBack: p.boolean().default(false),
    /** Refunded so far from an approved authorization (refund transactions refer to it by `originalTransaction`). */
    refundedAmount: p.decimal('string').precision(14).scale(2).default('0'),
    /** Held by refunds still in flight; with `refundedAmount` never more than `amount` (a check constraint). */
    refundReservedAmount: p.decimal('string').precision(14).scale(2).default('0'),
    originalTransaction: () => p.manyToOne(Transaction).nullable(),
    /**
     * The month an approved authorization counts in on its merchant account's monthly volume; null when it counts
     * nowhere (not approved, or voided since: the void gives its room on the cap back once, by clearing this).
     */
    volumeMonth: p.date().nullable(),
    /** The raw processor exchange (`gatewayResponses` item). */
    gatewayResponse: p.json<{ gateway: string; httpStatus: number; response: string }>(),
    sentAt: p.datetime(),
    completedAt: p.datetime().nullable(),
  },
  checks: [
    {
      name: 'transactions_refunds_within_amount',
      expression: '"refunded_amount" >= 0 and "refund_reserved_amount" >= 0 and "refunded_amount" + "refund_reserved_amount" <= "amount"',
    },
  ],
  indexes: [
    { properties: ['tenant', 'bin', 'last4'] },
    { properties: ['tenant', 'gatewayTransactionId'] },
    { properties: ['tenant', 'authCode'] },
    // Mitigation search (migration 000012): each filter's index ends in the search order (sent_at, id).
    ...MITIGATION_SEARCH_INDEXES,
    ...MITIGATION_SPECIAL_INDEXES,
  ],
});
export class Transaction extends TransactionSchema.class {}
TransactionSchema.setClass(Transaction);
