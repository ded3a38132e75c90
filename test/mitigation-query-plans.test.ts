import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openOrm, type MikroORM } from '../data/orm.ts';
import { searchMitigationTransactions } from '../data/queries/mitigation.ts';
import { parseMitigationFilter, type MitigationSearchInputShape } from '../domain/mitigation/search.ts';
import { searchTransactions } from '../services/mitigation/search-transactions.ts';
import { dropPlanSchema, explainEach, seedPlanSchema, type PlanNode } from './support/query-plans.ts';

/**
 * The mitigation search's page statement for each filter, EXPLAINed over copies of the tables in a schema of this
 * file's own (test/support/query-plans.ts), so the 80,000 seeded transactions and the vacuum never touch the tables
 * other suites run against. Tenant 1 has 40,000 transactions (products 1 and 2 of applications 1 and 2, merchant
 * accounts 1 and 2), tenant 2 (its child company in the parent case) and 199 others share 40,000 more. The page must
 * come from an index, never from reading `transactions` whole, and a deep page must be an index-only walk. The figures
 * at a million rows are in bench/README.md (`npm run bench:mitigation`).
 */
const SCHEMA = `mitigation_plans_${randomUUID().replaceAll('-', '')}`;
const TABLES = ['transactions', 'orders', 'products', 'subscriptions'];
const ROWS = 80_000;
const tenantOf = (i: string) => `case when ${i} <= 40000 then 1 else 2 + ${i} % 200 end`;

const SEED = [
  `insert into products (id, tenant_id, slug, name, price, currency, application_id, created_at, updated_at)
     select i, case when i <= 2 then 1 else i - 1 end, 'p' || i, 'Product ' || i, 19.99, 'USD', i, now(), now() from generate_series(1, 201) i`,
  `insert into orders (id, tenant_id, product_id, customer_id, amount, currency, state, campaign_id, created_at, updated_at)
     select i, ${tenantOf('i')}, case when i <= 40000 then 1 + i % 2 else 1 + ${tenantOf('i')} end, i % 1000 + 1, 19.99, 'USD', 'approved',
            case when i % 100 = 0 then i / 100 end, now(), now()
       from generate_series(1, ${ROWS}) i`,
  `insert into subscriptions (id, tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, created_at)
     select i, 1, 1, i, i * 10, 'sub' || i || '@example.com', 'active', 19.99, now(), now() from generate_series(1, 2000) i`,
  `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, reference, attempt_number, gateway,
       gateway_transaction_id, status_id, status, success, amount, currency, descriptor, auth_code, email, first_name, last_name, bin, last4, brand,
       card_fingerprint, expiry_month, expiry_year, sandbox, gateway_response, sent_at, completed_at)
     select md5('t' || o.id)::uuid, o.tenant_id, o.id, o.product_id, o.customer_id, case when o.tenant_id = 1 then 1 + o.id % 2 else o.tenant_id + 1 end,
            'plan-' || o.id, 1, 'sandbox', 'gw-plan-' || o.id, 2636, 'Approved', true, 10 + o.id % 50, case when o.id % 20 = 0 then 'EUR' else 'USD' end,
            case when o.id % 997 = 0 then 'RARE*DESCRIPTOR' else 'SHOP*PLAN' || o.id % 10 end, 'AC' || o.id, 'plan' || o.id % 1000 || '@example.com',
            'First' || o.id % 100, 'Last' || o.id % 300, lpad((o.id % 1000)::text, 6, '4') || '42', lpad((o.id % 10000)::text, 4, '0'), 'NetworkA', 'fp', 12, 2030,
            o.id % 50 = 0, '{}', now() - o.id * interval '1 minute', now() - o.id * interval '1 minute' + interval '2 seconds'
       from orders o`,
];

let orm: MikroORM;
/** Index names of the copies (`like … including all` names them anew) to the migrated indexes' names, by definition. */
const migratedName = new Map<string, string>();

/** An index definition without its name and schema: equal for an index and its copy. */
const definition = (indexdef: string) => indexdef.replace(/^(CREATE (?:UNIQUE )?INDEX) \S+ ON (?:\S+\.)?(\S+) /, '$1 ON $2 ');

beforeAll(async () => {
  orm = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 2 });
  await seedPlanSchema(orm, SCHEMA, TABLES, SEED);
  // The visibility map of the copy: without it the planner cannot choose an index-only walk. Only this copy is vacuumed.
  await orm.em.fork().execute(`vacuum (analyze) ${SCHEMA}.transactions`);
  const indexes = await orm.em.fork().execute<{ schemaname: string; indexname: string; indexdef: string }[]>(
    `select schemaname, indexname, indexdef from pg_indexes where schemaname in ('public', ?) and tablename = any(cast(? as text[]))`,
    [SCHEMA, `{${TABLES.join(',')}}`],
  );
  const byDefinition = new Map(indexes.filter((i) => i.schemaname === 'public').map((i) => [definition(i.indexdef), i.indexname]));
  for (const copy of indexes.filter((i) => i.schemaname === SCHEMA)) migratedName.set(copy.indexname, byDefinition.get(definition(copy.indexdef)) ?? copy.indexname);
}, 180_000);

afterAll(async () => {
  await dropPlanSchema(orm, SCHEMA);
  await orm?.close();
});

/** The plan of the page statement a search sends (the function's other statements, and its stand-in answers, aside). */
async function pagePlan(run: (em: EntityManager) => Promise<unknown>): Promise<PlanNode> {
  // The stand-in answer ({ id: 1 }) is no transaction row: turning it into a record fails once the statement is explained.
  const statements = await explainEach(orm, SCHEMA, (em) => run(em).catch(() => undefined));
  const pages = statements.filter((s) => s.sql.startsWith('with page as'));
  expect(pages).toHaveLength(1);
  return pages[0]!.plan;
}

/** The search of tenant 1 (the service's own path: its company look-up answers tenant 1), page at `offset`. */
const planOf = (body: MitigationSearchInputShape, offset = 0) =>
  pagePlan((em) => searchTransactions(em, { tenantId: 1, filter: parseMitigationFilter(body), page: { offset, limit: 100 } }));

type Node = PlanNode & { 'Index Name'?: string; 'Scan Direction'?: string };
const nodes = (node: Node): Node[] => [node, ...((node.Plans ?? []) as Node[]).flatMap(nodes)];
/** The indexes a plan reads, as `<node type> <migrated index name>`. */
const indexesOf = (plan: PlanNode) => nodes(plan).flatMap((n) => (n['Index Name'] ? [`${n['Node Type']} ${migratedName.get(n['Index Name']) ?? n['Index Name']}`] : []));
const seqScansOfTransactions = (plan: PlanNode) => nodes(plan).filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'transactions');

describe('mitigation search plans', () => {
  const day = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
  const filters: [string, MitigationSearchInputShape, RegExp][] = [
    ['no filter', {}, /transactions_tenant_sent_index/],
    ['emails', { emails: ['plan7@example.com'] }, /transactions_tenant_email_sent_index/],
    ['orderIds', { orderIds: [123] }, /transactions_order_id_index/],
    ['transactionIds', { transactionIds: ['00000000-0000-4000-8000-000000000000'] }, /transactions_pkey/],
    ['gatewayTransactionIds', { gatewayTransactionIds: ['gw-plan-77'] }, /transactions_tenant_id_gateway_transaction_id_index/],
    ['bin', { bin: '444123' }, /transactions_tenant_bin6_sent_index/],
    ['last4', { last4: '0077' }, /transactions_tenant_last4_sent_index/],
    ['firstName', { firstName: 'first7' }, /transactions_tenant_first_name_sent_index/],
    ['lastName', { lastName: 'last7' }, /transactions_tenant_last_name_sent_index/],
    ['authCodes', { authCodes: ['AC77'] }, /transactions_tenant_id_auth_code_index/],
    ['currency', { currency: 'EUR' }, /transactions_tenant_currency_sent_index/],
    ['dateFrom/dateTo', { dateFrom: day, dateTo: day }, /transactions_tenant_sent_index/],
    ['includeUpdated', { dateFrom: day, dateTo: day, includeUpdated: true }, /transactions_tenant_(sent|completed)_index/],
    ['descriptorContains (rare)', { descriptorContains: 'rare*desc' }, /transactions_descriptor_trgm_index/],
    ['sandbox', { sandbox: true }, /transactions_tenant_sandbox_sent_index/],
    ['amounts', { amounts: [17] }, /transactions_tenant_amount_sent_index/],
    ['subscriptionIds', { subscriptionIds: [1] }, /transactions_order_id_index/],
    ['campaignIds', { campaignIds: [1] }, /orders_campaign_id_index/],
    ['productIds', { productIds: [2] }, /transactions_tenant_(product_)?sent_index/],
    ['productIds (several)', { productIds: [1, 2] }, /transactions_tenant_(product_)?sent_index/],
    ['merchantAccountIds', { merchantAccountIds: [2] }, /transactions_(merchant_account|tenant)_sent_index/],
    ['applicationIds', { applicationIds: [2] }, /transactions_tenant_(product_)?sent_index/],
    ['companyIds', { companyIds: [1] }, /transactions_tenant_sent_index/],
    [
      'a combination (emails, productIds, currency and a period)',
      { emails: ['plan7@example.com', 'plan8@example.com'], productIds: [2], currency: 'USD', dateFrom: day, dateTo: day },
      /transactions_tenant_(email|product)_sent_index|transactions_tenant_sent_index/,
    ],
  ];

  it.each(filters)('%s reads its page through an index, never the whole table', async (_name, body, index) => {
    const plan = await planOf(body);
    expect(seqScansOfTransactions(plan)).toEqual([]);
    expect(indexesOf(plan).join('\n')).toMatch(index);
  });

  it("reads a parent's and its child company's transactions each from its own index range, no whole-table sort", async () => {
    const plan = await pagePlan((em) => searchMitigationTransactions(em, { companyIds: [1, 2], filter: parseMitigationFilter({}), page: { offset: 1_000, limit: 101 } }));
    expect(seqScansOfTransactions(plan)).toEqual([]);
    expect(indexesOf(plan).filter((i) => i === 'Index Only Scan transactions_tenant_sent_index')).toHaveLength(2);
    expect(nodes(plan).filter((n) => migratedName.get(n['Index Name'] ?? '') === 'transactions_tenant_sent_index').map((n) => n['Scan Direction'])).toEqual(['Backward', 'Backward']);
  });

  it('chooses page 300 of the unfiltered search by an index-only walk (a deferred join reads only the page)', async () => {
    const plan = await planOf({}, 29_900);
    expect(indexesOf(plan)).toContain('Index Only Scan transactions_tenant_sent_index');
    expect(seqScansOfTransactions(plan)).toEqual([]);
  });
});
