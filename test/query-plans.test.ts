import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openOrm, type MikroORM } from '../data/orm.ts';
import { findPrincipalAndAdmit } from '../data/queries/api-keys.ts';
import { findIdempotencyKey, insertIdempotencyKey, storeIdempotentResult } from '../data/queries/idempotency-keys.ts';
import { findLeadKeyAndAdmit, findLeadKeyByHash, isLeadOriginAllowed } from '../data/queries/lead-keys.ts';
import { findLeadPaidBy, listLeads, markLeadPaidIfUnpaid, upsertLead } from '../data/queries/leads.ts';
import { findEligibleMerchantAccounts,
  findForcedMerchantAccount, findMerchantAccountByMid, findSealedCredentials, reserveMonthlyVolume } from '../data/queries/merchant-accounts.ts';
import { closeSubmitOrder, openSubmitOrder, updateOrderState } from '../data/queries/orders.ts';
import { findTenantProduct } from '../data/queries/products.ts';
import { admitRequest, deleteWindowsBefore } from '../data/queries/rate-limits.ts';
import { deleteExpiredRows } from '../data/queries/retention.ts';
import { screenSubmitInDatabase } from '../data/queries/screening.ts';
import { findSubscriptionOfSubmitOrder, insertSubscriptionOfSubmitOrder } from '../data/queries/subscriptions.ts';
import { findChallengeRedirect, findThreeDSecurePayment } from '../data/queries/three-d-secure.ts';
import { recordAttempt } from '../data/queries/transactions.ts';
import { findUnstartedDeliveries } from '../data/queries/webhook-deliveries.ts';
import { dropPlanSchema, explainEach, planFindings, seedPlanSchema, sortsMoreThan } from './support/query-plans.ts';

/**
 * The statements of the submit path (and the retention purge) against tables of realistic size: each must reach
 * its few rows through an index, never by reading a large table whole or thousands of its rows. The product's own query functions run
 * against an EXPLAIN-capturing entity manager, so what is checked is the SQL the product sends.
 *
 * The tables are copies (`like ... including all`: columns, defaults, checks, indexes) of the migrated ones in a
 * schema of this file's own, seeded there with generate_series and dropped afterwards: suites running beside
 * this one never see the rows.
 */

const SCHEMA = `query_plans_${randomUUID().replaceAll('-', '')}`;

/** Tables seeded with thousands of rows and more: reading one whole is a finding. */
const LARGE = new Set([
  'tenants', 'products', 'api_keys', 'merchant_accounts', 'merchant_account_currencies', 'merchant_account_volumes', 'customers', 'orders',
  'subscriptions', 'transactions', 'submit_attempts', 'blocklist_entries', 'idempotency_keys', 'rate_limit_windows', 'webhook_deliveries',
  'applications', 'lead_key_sets', 'customer_leads',
]);

/** Rows per table: `i` runs over 1..n in each statement; tenant `t` owns products, accounts and keys (t-1)*10+1..t*10. */
const SEED: Record<string, string> = {
  tenants: `insert into tenants (id, slug, name, client_id, email_tenant_key, created_at, updated_at)
    select i, 't-' || i, 'Tenant ' || i, 'client-' || i, md5('etk' || i)::uuid, now(), now() from generate_series(1, 2000) i`,
  applications: `insert into applications (id, tenant_id, slug, name, lead_allowed_origins, created_at, updated_at)
    select i, case when i <= 2000 then i else i % 2000 + 1 end, case when i <= 2000 then 'default' else 'shop-' || i end, 'Shop ' || i,
           array['https://shop' || i || '.example', 'https://www.shop' || i || '.example'], now(), now() from generate_series(1, 50000) i`,
  products: `insert into products (id, tenant_id, application_id, slug, name, price, currency, created_at, updated_at)
    select i, (i - 1) / 10 + 1, (i - 1) / 10 + 1, 'p-' || i, 'Product ' || i, 19.99, 'USD', now(), now() from generate_series(1, 20000) i`,
  api_keys: `insert into api_keys (id, tenant_id, name, key_hash, display_prefix, created_at)
    select i, (i - 1) / 10 + 1, 'key ' || i, encode(sha256(('key' || i)::bytea), 'hex'), 'sk_test_', now() from generate_series(1, 20000) i`,
  merchant_accounts: `insert into merchant_accounts (id, tenant_id, mid, title, gateway, fully_live, max_price, monthly_cap, created_at, updated_at)
    select i, (i - 1) / 10 + 1, 'MID-' || i, 'Account ' || i, 'sandbox', i % 3 <> 0, 500, 100000, now(), now() from generate_series(1, 20000) i`,
  merchant_account_currencies: `insert into merchant_account_currencies (id, merchant_account_id, currency, credentials_ciphertext)
    select i, (i + 1) / 2, case when i % 2 = 1 then 'USD' else 'EUR' end, 'sealed' from generate_series(1, 40000) i`,
  merchant_account_volumes: `insert into merchant_account_volumes (merchant_account_id, month, currency, approved_amount)
    select (i - 1) % 20000 + 1, (date_trunc('month', now()) - make_interval(months => (i - 1) / 40000))::date, case when (i - 1) / 20000 % 2 = 0 then 'USD' else 'EUR' end, i % 5000
      from generate_series(1, 120000) i`,
  customers: `insert into customers (id, tenant_id, email, created_at, updated_at)
    select i, (i - 1) / 25 + 1, 'c' || i || '@example.com', now(), now() from generate_series(1, 50000) i`,
  // Orders 1..40000 are submits (every fifth with a 3-D Secure id); 40001..50000 are the subscriptions' orders, children of submits 1..10000.
  orders: `insert into orders (id, tenant_id, product_id, customer_id, kind, parent_order_id, state, amount, currency, workflow_id, three_d_secure_id, created_at, updated_at)
    select i, (c - 1) / 25 + 1, ((c - 1) / 25) * 10 + 1 + c % 10, c, case when i > 40000 then 'subscription' else 'submit' end,
           case when i > 40000 then i - 40000 end, 'approved', 19.99, 'USD', 'payment/' || i, case when i % 5 = 0 and i <= 40000 then 'tds-' || i end,
           now() - make_interval(mins => i % 10000), now()
      from generate_series(1, 50000) i, lateral (select case when i > 40000 then i - 40000 else i end as c) c`,
  subscriptions: `insert into subscriptions (id, tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, created_at)
    select i, (i - 1) / 25 + 1, ((i - 1) / 25) * 10 + 1 + i % 10, i, 40000 + i, 'c' || i || '@example.com', 'active', 19.99, now() + interval '30 days', now()
      from generate_series(1, 10000) i`,
  transactions: `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, reference, attempt_number, gateway, status_id, status,
      success, amount, currency, email, bin, last4, brand, card_fingerprint, expiry_month, expiry_year, gateway_response, sent_at)
    select md5('tx' || i)::uuid, (i - 1) / 25 + 1, i, ((i - 1) / 25) * 10 + 1, i, ((i - 1) / 25) * 10 + 1, 'ref-' || i, 1, 'sandbox', 2636, 'Approved',
           true, 19.99, 'USD', 'c' || i || '@example.com', '42424242', '4242', 'NetworkA', md5('card' || i), 12, 2030, '{}', now()
      from generate_series(1, 40000) i`,
  submit_attempts: `insert into submit_attempts (tenant_id, product_id, card_fingerprint, email, created_at)
    select (i - 1) / 50 + 1, ((i - 1) / 50) * 10 + 1 + i % 10, md5('card' || i % 30000), 'c' || i % 50000 || '@example.com', now() - make_interval(mins => i % 2940)
      from generate_series(1, 100000) i`,
  blocklist_entries: `insert into blocklist_entries (tenant_id, kind, value, created_at)
    select case when i % 10 = 0 then (i - 1) / 10 + 1 end, (array['email', 'card', 'bin', 'bin_country'])[i % 4 + 1],
           case i % 4 when 0 then 'b' || i || '@example.com' when 1 then md5('card' || i) when 2 then lpad((i * 7919 % 1000000)::text, 6, '0') else 'C' || i end, now()
      from generate_series(1, 20000) i`,
  idempotency_keys: `insert into idempotency_keys (tenant_id, key, request_hash, submit_order_id, created_at)
    select (i - 1) / 10 + 1, 'key-' || i, md5('rq' || i), i, now() - make_interval(mins => i) from generate_series(1, 20000) i`,
  rate_limit_windows: `insert into rate_limit_windows (subject, window_start, request_count)
    select 'api-key:' || i, date_trunc('minute', now()) - make_interval(mins => i % 3), 1 + i % 50 from generate_series(1, 20000) i`,
  lead_key_sets: `insert into lead_key_sets (id, tenant_id, application_id, environment, publishable_key_hash, secret_key_hash, created_at)
    select i, (i + 1) / 2, (i + 1) / 2, case when i % 2 = 0 then 'live' else 'test' end, md5('pk' || i) || md5('pk' || i), md5('sk' || i) || md5('sk' || i), now()
      from generate_series(1, 4000) i`,
  // Tenant 7 is a big shop with 50,000 leads (a plan that sorts them all would show); the rest share 150,000.
  customer_leads: `insert into customer_leads (id, tenant_id, application_id, environment, session_id, email, status, transaction_id, subscription_id, created_at, updated_at)
    select md5('lead' || i)::uuid, t, t, 'test', 's-' || i, 'l' || (i % 40000) || '@example.com', case when i % 10 = 0 then 'paid' else 'lead' end,
           case when i % 10 = 0 then 'tx-' || i end, case when i % 20 = 0 then i end, now(), now() - make_interval(mins => i % 100000)
      from generate_series(1, 200000) i, lateral (select case when i <= 50000 then 7 else i % 2000 + 1 end as t) t`,
  webhook_endpoints: `insert into webhook_endpoints (id, tenant_id, slug, url, secret_ciphertext, created_at, updated_at)
    select md5('ep' || i)::uuid, i, 'default', 'https://example.com/hooks', 'sealed', now(), now() from generate_series(1, 2000) i`,
  webhook_deliveries: `insert into webhook_deliveries (id, tenant_id, endpoint_id, event_type, body, state, attempt_count, created_at, completed_at)
    select 'msg_' || i, (i - 1) / 10 + 1, md5('ep' || ((i - 1) / 10 + 1))::uuid, 'transaction.completed', '{}',
           case when i % 20 = 0 then 'pending' else 'delivered' end, 1, now() - make_interval(hours => i % 1000),
           case when i % 20 <> 0 then now() - make_interval(hours => i % 1000) end
      from generate_series(1, 20000) i`,
};

let orm: MikroORM;

beforeAll(async () => {
  orm = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 2 });
  const tables = await orm.em.fork().execute<{ table_name: string }[]>(
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> 'mikro_orm_migrations'`,
  );
  // Every table is copied (statements join small ones too); the seeded ones are analyzed again after seeding.
  await seedPlanSchema(orm, SCHEMA, tables.map((t) => t.table_name), Object.values(SEED));
});

afterAll(async () => {
  await dropPlanSchema(orm, SCHEMA);
  await orm?.close();
});

/** A submit's statements each touch a handful of rows: an index read estimated at more than this is a scan by another name. */
const MAX_ROWS_READ = 1_000;

/** The statements `run` sends whose plans read large tables badly (more than `maxRows` through an index, or whole). */
async function badPlans(run: (em: EntityManager) => Promise<unknown>, maxRows: number): Promise<{ sql: string; findings: string[] }[]> {
  const statements = await explainEach(orm, SCHEMA, run);
  expect(statements.length).toBeGreaterThan(0);
  return statements.map(({ sql, plan }) => ({ sql, findings: planFindings(plan, { large: LARGE, maxRows }) })).filter((s) => s.findings.length > 0);
}

// Realistic parameters: tenant 7 owns products 61..70, merchant accounts MID-61..MID-70, customers 151..175,
// submit orders 151..175 (order 155 waits on 3-D Secure `tds-155`), idempotency key `key-65`.
const TENANT = 7;
const PRODUCT = 65;
// Seeded keys of tenant 7 (api key 65; lead key set 13, its test environment), so admissions run to the count.
const SEEDED_API_KEY_HASH = createHash('sha256').update('key65').digest('hex');
const SEEDED_PUBLISHABLE_KEY_HASH = createHash('md5').update('pk13').digest('hex').repeat(2);
const since = (minutes: number) => new Date(Date.now() - minutes * 60_000);
const card = { bin: '42424242', last4: '4242', network: 'NetworkA', expiryMonth: 12, expiryYear: 2030, fingerprint: 'e3'.repeat(32) };

const HOT_QUERIES: Record<string, (em: EntityManager) => Promise<unknown>> = {
  'API key lookup and admission (findPrincipalAndAdmit)': (em) =>
    findPrincipalAndAdmit(em, { keyHash: SEEDED_API_KEY_HASH, defaultLimit: 100, window: { windowStart: new Date(), previousWindowStart: new Date(Date.now() - 60_000), previousWeight: 0.5 } }),
  'rate limit admission (admitRequest)': (em) =>
    admitRequest(em, { subject: 'api-key:65', windowStart: new Date(), previousWindowStart: new Date(Date.now() - 60_000), previousWeight: 0.5, limit: 100 }),
  'rate limit cleanup (deleteWindowsBefore)': (em) => deleteWindowsBefore(em, 'api-key:65', new Date()),
  'product lookup (findTenantProduct)': (em) => findTenantProduct(em, TENANT, PRODUCT),
  'idempotency claim (insertIdempotencyKey)': (em) => insertIdempotencyKey(em, { tenantId: TENANT, key: 'key-new', requestHash: 'f'.repeat(64), submitOrderId: 60001 }),
  'idempotency lookup (findIdempotencyKey)': (em) => findIdempotencyKey(em, TENANT, 'key-65'),
  'idempotency result (storeIdempotentResult)': (em) => storeIdempotentResult(em, TENANT, 'key-65', { success: true } as never),
  'forced MID (findMerchantAccountByMid)': (em) => findMerchantAccountByMid(em, 'MID-65'),
  // A submit that passes every step, so the routine runs all of them: blocklist, live subscription, velocity claim.
  'screening (screenSubmitInDatabase)': (em) =>
    screenSubmitInDatabase(em, {
      tenantId: TENANT, productId: PRODUCT, email: 'c160@example.com', cardFingerprint: card.fingerprint, bin: card.bin, binCountry: 'US',
      checkSubscription: true, emailWindowSeconds: 86_400, now: new Date(), reserveOrderId: true,
    }),
  'MID selection (findEligibleMerchantAccounts)': (em) => findEligibleMerchantAccounts(em, { tenantId: TENANT, amount: '19.99', currency: 'USD', network: 'NetworkA' }),
  'forced MID (findForcedMerchantAccount)': (em) => findForcedMerchantAccount(em, { tenantId: TENANT, merchantAccountId: 65, amount: '19.99', currency: 'USD', network: 'NetworkA' }),
  'credentials (findSealedCredentials)': (em) => findSealedCredentials(em, 65, 'USD'),
  'cap reservation of an attempt (reserveMonthlyVolume)': (em) => reserveMonthlyVolume(em, { orderId: 160, merchantAccountId: 65, reference: 'ref-160-3' }),
  'submit order with its customer, campaign and affiliate (openSubmitOrder)': (em) =>
    openSubmitOrder(em, {
      id: 60001, tenantId: TENANT, productId: PRODUCT, amount: '19.99', currency: 'USD', workflowId: 'payment/7/60001', email: 'c160@example.com',
      details: { mobileWalletA: false, firstName: 'Ada', campaignName: 'spring', affiliateName: 'partner' },
    }),
  'order state (updateOrderState)': (em) => updateOrderState(em, { orderId: 155, state: 'pending_3ds', threeDSecureId: 'tds-155' }),
  'order closed, its reservation and unkept subscription released (closeSubmitOrder)': (em) => closeSubmitOrder(em, { orderId: 155, state: 'declined' }),
  'authorization attempt, its reservation ended and its approved volume (recordAttempt)': (em) =>
    recordAttempt(em, {
      submitOrderId: 160, reference: 'ref-160-2', attemptNumber: 2,
      merchantAccount: { merchantAccountId: 65, gateway: 'sandbox', mid: 'MID-65', descriptor: '' },
      processorTransactionId: 'px-1', statusId: 2636, status: 'Approved', approved: true, authCode: '123456', eci: null, amount: '19.99', currency: 'USD',
      email: 'c160@example.com', card, sandbox: true, exchange: {} as never, completedAt: new Date(), final: true, orderState: 'approved',
    }),
  'subscription of a submit (findSubscriptionOfSubmitOrder)': (em) => findSubscriptionOfSubmitOrder(em, 160),
  'new subscription (insertSubscriptionOfSubmitOrder)': (em) =>
    insertSubscriptionOfSubmitOrder(em, {
      submitOrderId: 160, email: 'c160@example.com', state: 'active', orderState: 'approved', recurringAmount: '19.99', nextBillingInDays: 30, graceUntil: null,
    }),
  '3-D Secure redirect (findChallengeRedirect)': (em) => findChallengeRedirect(em, 'tds-155'),
  '3-D Secure completion (findThreeDSecurePayment)': (em) => findThreeDSecurePayment(em, { threeDSecureId: 'tds-155', tenantId: TENANT, productId: PRODUCT }),
};

/**
 * The hourly purge reaches expired rows by age through an index, a batch at a time (so thousands of rows by
 * design). rate_limit_windows is not here: it holds a row or two per API key, since the limiter drops a key's
 * old windows itself, and its purge may read it whole rather than slow every request with another index.
 */
const PURGES: Record<string, (em: EntityManager) => Promise<unknown>> = {
  'retention of submit attempts (deleteExpiredRows)': (em) => deleteExpiredRows(em, 'submit_attempts', 2 * 86_400, 5_000),
  'retention of idempotency keys (deleteExpiredRows)': (em) => deleteExpiredRows(em, 'idempotency_keys', 7 * 86_400, 5_000),
  'retention of webhook deliveries (deleteExpiredRows)': (em) => deleteExpiredRows(em, 'webhook_deliveries', 30 * 86_400, 5_000),
  'unstarted-deliveries sweep (findUnstartedDeliveries)': (em) => findUnstartedDeliveries(em, { createdBefore: new Date(Date.now() - 600_000), limit: 200 }),
};

const leadPayment = { transactionId: 'tx-new', orderId: 160, amount: '19.99', currency: 'USD', subscriptionId: null, paidAt: new Date() };
const LEAD_QUERIES: Record<string, (em: EntityManager) => Promise<unknown>> = {
  'lead key (findLeadKeyByHash)': (em) => findLeadKeyByHash(em, 'secret', 'b'.repeat(64)),
  'lead key and admission (findLeadKeyAndAdmit)': (em) =>
    findLeadKeyAndAdmit(em, {
      kind: 'publishable', keyHash: SEEDED_PUBLISHABLE_KEY_HASH, clientAddress: '127.0.0.1', origin: 'https://shop7.example', defaultLimit: 100,
      window: { windowStart: new Date(), previousWindowStart: new Date(Date.now() - 60_000), previousWeight: 0.5 },
    }),
  'lead preflight origin (isLeadOriginAllowed)': (em) => isLeadOriginAllowed(em, 'https://shop77.example'),
  'lead upsert (upsertLead)': (em) =>
    upsertLead(em, { id: randomUUID(), tenantId: TENANT, applicationId: TENANT, environment: 'test', lead: { sessionId: 's-77', email: 'a@example.com', trackingFields: {} } }),
  'lead paid marking (markLeadPaidIfUnpaid)': (em) => markLeadPaidIfUnpaid(em, { tenantId: TENANT, productId: PRODUCT, merchantAccountId: 65, sessionId: 's-77' }, leadPayment),
  'lead paid retry (findLeadPaidBy)': (em) => findLeadPaidBy(em, { tenantId: TENANT, sessionId: 's-77', transactionId: 'tx-new' }),
  // The big shop's 50,000 leads are all test ones: its live key's page must not pass them to find none.
  'lead list of a live key (listLeads)': (em) => listLeads(em, { tenantId: TENANT, environment: 'live', filter: {}, limit: 50 }),
  // The status matches many leads: read through the environment's index too, not the status's (all paid test leads).
  'lead list of a live key by status (listLeads)': (em) => listLeads(em, { tenantId: TENANT, environment: 'live', filter: { status: 'paid' }, limit: 50 }),
};

/** Every filter of the lead query (spec 4.4), alone, for the tenant with 50,000 leads, newest 50. */
const LEAD_LISTS: Record<string, Parameters<typeof listLeads>[1]['filter']> = {
  'no filter': {},
  id: { id: randomUUID() },
  email: { email: 'l77@example.com' },
  session_id: { sessionId: 's-77' },
  transaction_id: { transactionId: 'tx-70' },
  subscription_id: { subscriptionId: 60 },
  status: { status: 'paid' },
  'email and status': { email: 'l77@example.com', status: 'lead' },
};


describe('query plans on large tables', () => {
  // A routine's plans are its statements' own: a call of a routine explained as one Function Scan would hide them.
  it('explains each statement a routine runs, with the plan PL/pgSQL used', async () => {
    const admission = (await explainEach(orm, SCHEMA, LEAD_QUERIES['lead key and admission (findLeadKeyAndAdmit)']!)).map((statement) => statement.sql);
    expect(admission.some((sql) => /from lead_key_sets k join applications a/.test(sql))).toBe(true);
    expect(admission.some((sql) => /insert into rate_limit_windows/.test(sql))).toBe(true);
    const screening = (await explainEach(orm, SCHEMA, HOT_QUERIES['screening (screenSubmitInDatabase)']!)).map((statement) => statement.sql);
    for (const table of ['blocklist_entries', 'subscriptions', 'products', 'submit_attempts']) {
      expect({ table, explained: screening.some((sql) => sql.includes(`from ${table}`)) }).toEqual({ table, explained: true });
    }
    expect(screening.some((sql) => /insert into submit_attempts/.test(sql))).toBe(true);
  });

  it.each(Object.entries(LEAD_QUERIES))('%s reads a few rows through indexes', async (_name, run) => {
    expect(await badPlans(run, MAX_ROWS_READ)).toEqual([]);
  });

  // A filtered page of a big shop's leads: the index gives the rows already newest first, so the limit stops
  // the read after 50; no scan of the table and no sort of every match.
  it.each(Object.entries(LEAD_LISTS))('the lead list filtered by %s reads its page in index order', async (_name, filter) => {
    const [only, ...rest] = await explainEach(orm, SCHEMA, (em) => listLeads(em, { tenantId: TENANT, filter, limit: 50 }));
    expect(rest).toEqual([]);
    expect(planFindings(only!.plan, { large: LARGE, maxRows: Infinity })).toEqual([]);
    expect(sortsMoreThan(only!.plan, 50)).toBe(false);
  });

  it.each(Object.entries(HOT_QUERIES))('%s reads a few rows through indexes', async (_name, run) => {
    expect(await badPlans(run, MAX_ROWS_READ)).toEqual([]);
  });

  it.each(Object.entries(PURGES))('%s reads no table whole', async (_name, run) => {
    expect(await badPlans(run, Infinity)).toEqual([]);
  });
});
