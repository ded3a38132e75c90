import { defineEntity, p } from '@mikro-orm/core';
import { Order } from './order.entity.ts';
import { Tenant } from './tenant.entity.ts';
import { Transaction } from './transaction.entity.ts';

export const REFUND_STATES = ['pending', 'succeeded', 'failed'] as const;
export type RefundState = (typeof REFUND_STATES)[number];

/**
 * One refund request of an approved payment (`re_...`): its amount is held on the original transaction while
 * the refund workflow runs, and settled exactly once (succeeded: a `refund` transaction records it).
 */
const RefundSchema = defineEntity({
  name: 'Refund',
  tableName: 'refunds',
  properties: {
    id: p.string().length(40).primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    /** The payment (its submit order). */
    order: () => p.manyToOne(Order).index(),
    originalTransaction: () => p.manyToOne(Transaction),
    amount: p.decimal('string').precision(14).scale(2),
    currency: p.string().length(3),
    state: p.enum(() => [...REFUND_STATES]).default('pending'),
    statusId: p.integer().nullable(),
    failureMessage: p.string().length(255).nullable(),
    refundTransaction: () => p.manyToOne(Transaction).nullable().deleteRule('set null'),
    reason: p.string().length(200).nullable(),
    idempotencyKey: p.string().length(255).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** The amount its request named; null: what was left (an Idempotency-Key replay must ask the same). */
    requestedAmount: p.decimal('string').precision(14).scale(2).nullable(),
    /** When its workflow first went to send it; until then a request that could not start the workflow undoes it. */
    submittedAt: p.datetime().nullable(),
    /** Its workflow could not learn the processor's answer: still pending and held, for an operator to settle. */
    reviewRequiredAt: p.datetime().nullable(),
    /** The payment's refunded total as this refund's settlement left it (what its webhook tells). */
    refundedTotalAfter: p.decimal('string').precision(14).scale(2).nullable(),
    /** Whether anything of the payment was left to refund once this refund settled. */
    refundableAfter: p.boolean().nullable(),
  },
  uniques: [{ properties: ['tenant', 'idempotencyKey'] }],
  // The refunds no workflow has claimed yet, oldest first: what the unstarted-refunds sweep reads.
  indexes: [
    {
      name: 'refunds_unstarted_index',
      expression: `create index "refunds_unstarted_index" on "refunds" ("created_at") where "state" = 'pending' and "submitted_at" is null and "review_required_at" is null`,
    },
  ],
  checks: [{ name: 'refunds_amount_positive', expression: '"amount" > 0' }],
});
export class Refund extends RefundSchema.class {}
RefundSchema.setClass(Refund);
