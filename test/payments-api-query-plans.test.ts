import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openOrm, type MikroORM } from '../data/orm.ts';
import { findPayment, listPayments, type PaymentListFilter } from '../data/queries/payments-api.ts';
import { findRebillSubject, findTenantSubscription, listRebills, openRebill } from '../data/queries/rebills.ts';
import { findRefund, findRefundEvent, findRefundInstruction, findUnstartedRefunds, listRefundsOfOrder } from '../data/queries/refunds.ts';
import { dropPlanSchema, explainEach, planFindings, seedPlanSchema, sortsMoreThan } from './support/query-plans.ts';

/**
 * The statements of the generic /payments API, refunds and rebills against tables of realistic size (the approach of
 * test/query-plans.test.ts): each point read reaches its rows through an index, and a page of a big tenant's payments
 * comes out of an index in order, whatever the filters, without reading the tables whole or sorting every match.
 */
const SCHEMA = `payments_api_plans_${randomUUID().replaceAll('-', '')}`;
const TABLES = ['orders', 'customers', 'transactions', 'refunds', 'subscriptions', 'products', 'rebills'];
const LARGE = new Set(TABLES);
/** Tenant 7 holds 40,000 of the 100,000 orders (a big merchant). */
const TENANT = 7;

const SEED = [
  `insert into products (id, tenant_id, application_id, slug, name, price, currency, created_at, updated_at)
     select i, i % 500 + 1, i, 'p' || i, 'P' || i, 9.99, 'USD', now(), now() from generate_series(1, 2000) i`,
  `insert into customers (id, tenant_id, email, created_at, updated_at)
     select i, case when i <= 20000 then ${TENANT} else i % 500 + 1 end, 'c' || i || '@example.com', now(), now() from generate_series(1, 50000) i`,
  `insert into orders (id, tenant_id, product_id, customer_id, kind, state, amount, currency, created_at, updated_at)
     select i, case when i <= 40000 then ${TENANT} else i % 500 + 1 end, i % 2000 + 1, case when i <= 40000 then i % 20000 + 1 else 20000 + i % 30000 + 1 end,
            'submit', (array['approved', 'approved', 'approved', 'declined', 'failed'])[i % 5 + 1], (i % 5000) / 100.0 + 1, 'USD', now() - make_interval(mins => 100000 - i), now()
       from generate_series(1, 100000) i`,
  `insert into transactions (id, tenant_id, order_id, product_id, customer_id, kind, reference, attempt_number, gateway, status_id, status, success, amount, currency,
       mid, email, bin, last4, brand, card_fingerprint, expiry_month, expiry_year, gateway_response, sent_at)
     select md5('t' || i)::uuid, case when i <= 40000 then ${TENANT} else i % 500 + 1 end, i, i % 2000 + 1, 1, 'authorization', i || '-1', 1, 'sandbox',
            2636, 'Transaction succeeded', i % 5 < 3, (i % 5000) / 100.0 + 1, 'USD', 'MID-' || i % 7, 'c@example.com', '42424242', '4242', 'NetworkA', md5('f' || i), 12, 2030, '{}', now()
       from generate_series(1, 100000) i`,
  `insert into refunds (id, tenant_id, order_id, original_transaction_id, amount, currency, state, created_at, updated_at)
     select 're_' || md5('r' || i), ${TENANT}, i, md5('t' || i)::uuid, 1, 'USD', 'succeeded', now(), now() from generate_series(1, 20000) i`,
  `insert into subscriptions (id, tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, created_at)
     select i, i % 500 + 1, i % 2000 + 1, i, i, 'c' || i || '@example.com', 'active', 4.99, now(), now() from generate_series(1, 20000) i`,
  `insert into rebills (subscription_id, period, attempt, order_id, created_at)
     select i % 20000 + 1, i / 20000 + 1, 0, 200000 + i, now() from generate_series(1, 60000) i`,
];

let orm: MikroORM;

beforeAll(async () => {
  orm = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 2 });
  await seedPlanSchema(orm, SCHEMA, TABLES, SEED);
}, 120_000);

afterAll(async () => {
  await dropPlanSchema(orm, SCHEMA);
  await orm?.close();
});

async function plansOf(run: (em: EntityManager) => Promise<unknown>) {
  const plans = await explainEach(orm, SCHEMA, run);
  expect(plans.length).toBeGreaterThan(0);
  return plans;
}

const POINT_QUERIES: Record<string, (em: EntityManager) => Promise<unknown>> = {
  'payment (findPayment)': (em) => findPayment(em, TENANT, 777),
  'refund (findRefund)': (em) => findRefund(em, TENANT, 're_x'),
  'refunds of a payment (listRefundsOfOrder)': (em) => listRefundsOfOrder(em, TENANT, 777),
  'refund instruction (findRefundInstruction)': (em) => findRefundInstruction(em, 're_x'),
  'refund webhook data (findRefundEvent)': (em) => findRefundEvent(em, 're_x'),
  'refunds no workflow started (findUnstartedRefunds)': (em) => findUnstartedRefunds(em, { reservedBefore: new Date(Date.now() - 600_000), limit: 100 }),
  'rebill subject (findRebillSubject)': (em) => findRebillSubject(em, 77),
  'subscription (findTenantSubscription)': (em) => findTenantSubscription(em, TENANT, 77),
  'rebill order (openRebill)': (em) => openRebill(em, { subscriptionId: 77, period: 2, attempt: 0 }),
  'rebills of a subscription (listRebills)': (em) => listRebills(em, 77),
};

describe('point reads', () => {
  for (const [name, run] of Object.entries(POINT_QUERIES)) {
    it(`${name} reaches its rows through an index`, async () => {
      for (const { sql, plan } of await plansOf(run)) expect(planFindings(plan, { large: LARGE, maxRows: 100 }), sql).toEqual([]);
    });
  }
});

const FILTERS: Record<string, PaymentListFilter> = {
  'no filter': {},
  'a page after a cursor': { beforeOrderId: 30000 },
  status: { states: ['declined', 'failed'] },
  'e-mail': { email: 'C77@example.com' },
  'amount range': { amountFrom: 1000, amountTo: 2000 },
  MID: { mid: 'MID-3' },
  'creation range': { createdFrom: new Date(Date.now() - 86_400_000), createdBeforeSeconds: Date.now() / 1000 },
};

describe("a page of a big tenant's payments (listPayments)", () => {
  for (const [name, filter] of Object.entries(FILTERS)) {
    it(`with ${name}: no table read whole, no sort of every match`, async () => {
      for (const { sql, plan } of await plansOf((em) => listPayments(em, TENANT, filter, 11))) {
        expect(planFindings(plan, { large: LARGE, maxRows: Number.POSITIVE_INFINITY }), sql).toEqual([]);
        expect(sortsMoreThan(plan, 11), sql).toBe(false);
      }
    });
  }
});
