/**
 * `npm run bench:mitigation [-- --transactions 1000000] [-- --iterations 100] [-- --reseed]`: the mitigation search
 * (spec 4.10) at scale. Starts its own PostgreSQL (under .data/bench-mitigation unless DATABASE_URL is set), stores a
 * million transactions across four tenants, ten MIDs each and a year of dates (kept between runs; `--reseed` rebuilds
 * them), then times the product's own search (`searchTransactions`: the company look-up and the page statement) for
 * every filter alone, typical combinations and deep pages: p50/p99 in ms. Each search's page statement is EXPLAINed
 * (ANALYZE) and the indexes it reads are printed; a plan that reads `transactions` whole is marked.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { createCardFingerprinter } from '../domain/crypto/card-vault.ts';
import { parseMitigationFilter, parseMitigationPage, type MitigationSearchInputShape } from '../domain/mitigation/search.ts';
import { startBenchServers } from './bench-servers.ts';
import { migrate, openOrm } from '../data/orm.ts';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { searchTransactions } from '../services/mitigation/search-transactions.ts';

const argument = (name: string) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) || undefined : undefined);
const total = argument('--transactions') ?? 1_000_000;
const iterations = argument('--iterations') ?? 100;
const reseed = process.argv.includes('--reseed');
const { servers } = await startBenchServers({ folder: 'bench-mitigation', postgresPort: 54351 });
const orm = await openOrm({ databaseUrl: servers.databaseUrl, poolSize: 2 });
await migrate(orm);
const em = () => orm.em.fork() as EntityManager;

const TENANTS = ['bench-mit-main', 'bench-mit-b', 'bench-mit-c', 'bench-mit-d'];
const [{ n: stored }] = await em().execute<[{ n: string }]>(
  `select count(*) as n from transactions t join tenants tn on tn.id = t.tenant_id where tn.slug = any(cast(? as text[]))`,
  [`{${TENANTS.join(',')}}`],
);
if (reseed || Number(stored) < total) await seed();
const tenantId = (await em().execute<{ id: number }[]>(`select id from tenants where slug = 'bench-mit-main'`))[0]!.id;
const sample = await em().execute<Record<string, any>[]>(
  `select t.id, t.order_id, t.email, t.gateway_transaction_id, t.auth_code, t.merchant_account_id, t.product_id, p.application_id, o.campaign_id, t.sent_at
     from transactions t join products p on p.id = t.product_id join orders o on o.id = t.order_id
    where t.tenant_id = ? order by t.sent_at desc offset 5000 limit 1`,
  [tenantId],
);
const row = sample[0]!;
const [{ id: subscriptionId }] = await em().execute<[{ id: number }]>(`select id from subscriptions where tenant_id = ? order by id desc limit 1`, [tenantId]);
const day = (offsetDays: number) => new Date(Date.now() - offsetDays * 86_400_000).toISOString().slice(0, 10);

const scenarios: [string, MitigationSearchInputShape][] = [
  ['no filter, page 1', {}],
  ['no filter, page 500 (limit 100)', { pageNumber: 500 }],
  ['currency USD, page 500 (limit 100)', { currency: 'USD', pageNumber: 500 }],
  ['no filter, limit 1000', { limit: 1000 }],
  ['emails', { emails: [row.email] }],
  ['orderIds', { orderIds: [row.order_id] }],
  ['transactionIds', { transactionIds: [row.id] }],
  ['gatewayTransactionIds', { gatewayTransactionIds: [row.gateway_transaction_id] }],
  ['bin', { bin: '411111' }],
  ['last4', { last4: '4242' }],
  ['firstName', { firstName: 'Grace' }],
  ['lastName', { lastName: 'Hopper' }],
  ['authCodes', { authCodes: [row.auth_code] }],
  ['currency (GBP, 5%)', { currency: 'GBP' }],
  ['dateFrom/dateTo (one day)', { dateFrom: day(30), dateTo: day(30) }],
  ['dateFrom/dateTo + includeUpdated', { dateFrom: day(30), dateTo: day(30), includeUpdated: true }],
  ['descriptorContains (common)', { descriptorContains: 'brand3' }],
  ['descriptorContains (rare)', { descriptorContains: 'special' }],
  ['sandbox', { sandbox: true }],
  ['applicationIds', { applicationIds: [row.application_id] }],
  ['productIds', { productIds: [row.product_id] }],
  ['campaignIds', { campaignIds: [row.campaign_id] }],
  ['merchantAccountIds', { merchantAccountIds: [row.merchant_account_id] }],
  ['companyIds', { companyIds: [tenantId] }],
  ['subscriptionIds', { subscriptionIds: [subscriptionId] }],
  ['amounts', { amounts: [49.99] }],
  ['email + currency', { emails: [row.email], currency: 'USD' }],
  ['bin + last4', { bin: '424242', last4: '1111' }],
  ['merchantAccountIds + one month', { merchantAccountIds: [row.merchant_account_id], dateFrom: day(60), dateTo: day(30) }],
  ['firstName + lastName + sandbox=false', { firstName: 'Grace', lastName: 'Hopper', sandbox: false }],
];

const lines: string[] = [];
const plans: string[] = [];
for (const [name, body] of scenarios.filter(([name]) => !process.env.BENCH_ONLY || name.includes(process.env.BENCH_ONLY))) {
  const request = () => {
    const page = parseMitigationPage(body);
    return { tenantId, filter: parseMitigationFilter(body), page: { offset: (page.pageNumber - 1) * page.limit, limit: page.limit } };
  };
  for (let i = 0; i < 5; i++) await searchTransactions(em(), request());
  const times: number[] = [];
  let count = 0;
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    count = (await searchTransactions(em(), request())).records.length;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const p = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
  const plan = await explain(request);
  process.stderr.write(`${name}: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, ${count} rows; ${plan.summary}\n`);
  lines.push(`| ${name} | ${p(0.5)} | ${p(0.99)} | ${count} | ${plan.summary} |`);
  plans.push(`${name}:\n${plan.text}`);
}

process.stdout.write(
  [
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${total} transactions (${TENANTS.length} tenants, the searched one holds 70%); ${iterations} searches per row`,
    '',
    '| search | p50 ms | p99 ms | rows | page statement reads |',
    '| --- | --- | --- | --- | --- |',
    ...lines,
    '',
    ...(process.argv.includes('--plans') ? plans : []),
  ].join('\n'),
);
await orm.close();
await servers.stop();

/** The plan of the search's page statement, captured from the product's own call and run again under EXPLAIN ANALYZE. */
async function explain(request: () => Parameters<typeof searchTransactions>[1]): Promise<{ summary: string; text: string }> {
  const manager = em();
  const connection = manager.getConnection();
  const original = connection.execute.bind(connection);
  let statement: [string, unknown[]] | undefined;
  connection.execute = ((query: string, params: unknown[] = [], ...rest: unknown[]) => {
    if (typeof query === 'string' && query.includes('with page as')) statement = [query, params];
    return (original as (...args: unknown[]) => unknown)(query, params, ...rest);
  }) as typeof connection.execute;
  try {
    await searchTransactions(manager, request());
  } finally {
    connection.execute = original;
  }
  if (!statement) return { summary: 'no page statement', text: '' };
  const rows = await em().execute<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${statement[0]}`, statement[1]);
  const text = rows.map((r) => r['QUERY PLAN']).join('\n');
  const scans = [...text.matchAll(/(Index Only Scan|Index Scan Backward|Index Scan|Bitmap Index Scan|Seq Scan)(?: Backward)?(?: using (\w+))? on (\w+)/g)].map(
    (m) => `${m[1]}${m[2] ? ` ${m[2]}` : ''}${m[1] === 'Seq Scan' ? ` on ${m[3]}` : ''}`,
  );
  const whole = /Seq Scan on transactions/.test(text) ? ' (WHOLE TABLE)' : '';
  return { summary: `${[...new Set(scans)].join(', ')}${whole}`, text };
}

async function seed(): Promise<void> {
  process.stderr.write(`Storing ${total} transactions…\n`);
  const started = performance.now();
  const key = randomBytes(32);
  await em().execute(`delete from tenants where slug like 'bench-mit-%'`);
  for (const slug of TENANTS) {
    await provision(
      { em: em(), secretBox: createSecretBox(key), fingerprintCard: createCardFingerprinter(key), actor: 'bench' },
      parseFixture({
        tenants: [
          {
            slug,
            name: slug,
            clientId: slug,
            applications: [{ slug: 'shop', name: 'Shop' }, { slug: 'club', name: 'Club' }],
            products: [
              { slug: 'one-off', name: 'One-off', price: '49.99', currency: 'USD', application: 'shop' },
              { slug: 'club', name: 'Club', price: '19.99', currency: 'USD', application: 'club' },
            ],
            merchantAccounts: Array.from({ length: 10 }, (_, m) => ({ mid: `${slug}-mid-${m}`, title: `MID ${m}`, gateway: 'sandbox', descriptor: `BRAND${m}*${slug}`.slice(0, 22) })),
          },
        ],
      }),
    );
  }
  const x = em();
  await x.execute(`insert into campaigns (tenant_id, name, created_at) select t.id, 'campaign-' || c, now() from tenants t, generate_series(0, 9) c where t.slug like 'bench-mit-%'`);
  // Row i belongs to the main tenant 7 times in 10, else to one of the other three; everything else varies with i.
  const common = `with tn as (select id, row_number() over (order by id) - 1 as k from tenants where slug like 'bench-mit-%'),
    s as (select i, (select id from tn where k = case when i % 10 < 7 then 0 else i % 10 - 6 end) as tenant_id from generate_series(1, ${total}) i)`;
  await x.execute(
    `${common} insert into customers (tenant_id, email, first_name, last_name, created_at, updated_at)
     select tenant_id, 'buyer' || (i % 200000) || '@example.com', 'First', 'Last', now(), now() from s where i <= 200000 on conflict do nothing`,
  );
  await x.execute(
    `${common} insert into orders (id, tenant_id, product_id, customer_id, amount, currency, campaign_id, state, created_at, updated_at)
     select 100000000 + i, s.tenant_id,
            (select p.id from products p where p.tenant_id = s.tenant_id order by p.id offset i % 2 limit 1),
            coalesce((select c.id from customers c where c.tenant_id = s.tenant_id and c.email = 'buyer' || (i % 200000) || '@example.com'),
                     (select c.id from customers c where c.tenant_id = s.tenant_id limit 1)),
            case i % 2 when 0 then 49.99 else 19.99 end, 'USD',
            (select c.id from campaigns c where c.tenant_id = s.tenant_id order by c.id offset i % 10 limit 1),
            'approved', now() - (i * interval '31 seconds'), now()
       from s`,
  );
  const first = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Dennis', 'Frances'];
  const last = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Thompson', 'Ritchie', 'Allen', 'Smith', 'Jones'];
  await x.execute(
    `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
       gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, auth_code, email, first_name, last_name, bin, last4,
       brand, card_fingerprint, expiry_month, expiry_year, sandbox, refundable, gateway_response, sent_at, completed_at)
     select md5('bench-tx' || o.id)::uuid, o.tenant_id, o.id, o.product_id, o.customer_id, m.id, 'authorization', 'bench-' || o.id, 1, 'sandbox',
            'gw-' || o.id, case when o.id % 10 = 0 then 3617 else 2636 end, case when o.id % 10 = 0 then 'Declined' else 'Transaction succeeded' end,
            o.id % 10 <> 0, o.amount, case when o.id % 20 = 0 then 'GBP' when o.id % 20 < 4 then 'EUR' else 'USD' end, m.mid,
            case when o.id % 5000 = 0 then 'SPECIAL*OFFER' else m.descriptor end,
            upper(substr(md5('auth' || o.id), 1, 6)), cu.email,
            (cast(? as text[]))[o.id % 10 + 1], (cast(? as text[]))[o.id % 12 + 1],
            (array['41111111', '42424242', '55555555', '51051051', '37828224', '60110000', '35660020', '40000566', '52000828', '22223000'])[o.id % 10 + 1],
            lpad((o.id % 10000)::text, 4, '0'), 'NetworkA', md5('card' || (o.id % 300000)), 12, 2030, o.id % 20 = 3, o.id % 10 <> 0,
            '{"gateway":"sandbox","httpStatus":200,"response":"{}"}', o.created_at,
            o.created_at + case when o.id % 100 = 0 then interval '3 days' else interval '2 seconds' end
       from orders o
       join customers cu on cu.id = o.customer_id
       cross join lateral (select id, mid, descriptor from merchant_accounts ma where ma.tenant_id = o.tenant_id order by ma.id offset o.id % 10 limit 1) m
      where o.id > 100000000`,
    [`{${first.join(',')}}`, `{${last.join(',')}}`],
  );
  // One in a hundred approved payments is partly refunded: a transaction of its own, referring to the original.
  await x.execute(
    `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
       gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, email, bin, last4, brand, card_fingerprint,
       expiry_month, expiry_year, original_transaction_id, gateway_response, sent_at, completed_at)
     select gen_random_uuid(), t.tenant_id, t.order_id, t.product_id, t.customer_id, t.merchant_account_id, 'refund', 'refund-' || t.reference, 1, t.gateway,
            'rf-' || t.gateway_transaction_id, 2636, 'Transaction succeeded', true, 5.00, t.currency, t.mid, t.descriptor, t.email, t.bin, t.last4, t.brand,
            t.card_fingerprint, 12, 2030, t.id, t.gateway_response, t.sent_at + interval '5 days', t.sent_at + interval '5 days'
       from transactions t where t.reference like 'bench-%' and t.order_id % 100 = 1 and t.success`,
  );
  await x.execute(
    `insert into subscriptions (tenant_id, product_id, customer_id, order_id, email, state, recurring_amount, next_billing_at, created_at)
     select o.tenant_id, o.product_id, o.customer_id, o.id, 'sub' || o.id || '@example.com', 'cancelled', 19.99, now(), o.created_at
       from orders o where o.id > 100000000 and o.id % 50 = 0`,
  );
  await x.execute(`vacuum (analyze) transactions`);
  await x.execute(`vacuum (analyze) orders`);
  await x.execute(`analyze customers; analyze subscriptions; analyze products; analyze campaigns; analyze tenants`);
  process.stderr.write(`Stored in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
}
