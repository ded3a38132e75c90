import { defineEntity, p } from '@mikro-orm/core';
import { Customer } from './customer.entity.ts';
import { MerchantAccount } from './merchant-account.entity.ts';
import { Order } from './order.entity.ts';
import { Product } from './product.entity.ts';
import { Tenant } from './tenant.entity.ts';

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
    originalTransaction: () => p.manyToOne(Transaction).nullable(),
    /** The raw processor exchange (`gatewayResponses` item). */
    gatewayResponse: p.json<{ gateway: string; httpStatus: number; response: string }>(),
    sentAt: p.datetime(),
    completedAt: p.datetime().nullable(),
  },
  indexes: [
    { properties: ['tenant', 'sentAt'] },
    { properties: ['tenant', 'email'] },
    { properties: ['tenant', 'bin', 'last4'] },
    { properties: ['tenant', 'gatewayTransactionId'] },
    { properties: ['tenant', 'authCode'] },
    { properties: ['merchantAccount', 'sentAt'] },
  ],
});
export class Transaction extends TransactionSchema.class {}
TransactionSchema.setClass(Transaction);
