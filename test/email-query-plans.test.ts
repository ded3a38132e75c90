import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openOrm, type MikroORM } from '../data/orm.ts';
import { claimEmailKey, findEmailKey, markEmailKeyDispatchFailed, storeEmailKeyResponse } from '../data/queries/email-idempotency.ts';
import { findEmail, findEmailSender, listEmailEvents, listEmails, loadQueuedEmails, endQueuedEmailsOfStoppedDelivery, recordDeliveryOutcomes } from '../data/queries/emails.ts';
import type { EmailFilter } from '../domain/email/email-record.ts';
import { dropPlanSchema, explainEach, planFindings, seedPlanSchema, sortsMoreThan } from './support/query-plans.ts';

/**
 * The e-mail statements against tables of realistic size (the approach of test/query-plans.test.ts): copies of the
 * migrated tables in a schema of this file's own, seeded with generate_series, each statement EXPLAINed as the
 * product sends it. A statement must reach its rows through an index; a page of a big sender's e-mails must come
 * out of an index already in order, with no sort of every match.
 */
const SCHEMA = `email_plans_${randomUUID().replaceAll('-', '')}`;
const TABLES = ['tenants', 'sender_domains', 'emails', 'email_events', 'email_idempotency_keys'];
const LARGE = new Set(TABLES);
/** Tenant 7 sends 100,000 of the 200,000 e-mails (a big sender); ids are md5-derived uuids. */
const TENANT = 7;

const SEED = [
  `insert into tenants (id, slug, name, client_id, email_tenant_key, created_at, updated_at)
     select i, 't-' || i, 'Tenant ' || i, 'client-' || i, md5('etk' || i)::uuid, now(), now() from generate_series(1, 2000) i`,
  `insert into sender_domains (id, tenant_id, domain, created_at) select i, (i - 1) / 3 + 1, 'd' || i || '.example', now() from generate_series(1, 6000) i`,
  `insert into emails (id, tenant_id, batch_id, batch_index, from_address, to_addresses, subject, template_type, template_name, status, created_at, updated_at)
     select md5('e' || i)::uuid, case when i <= 100000 then ${TENANT} else i % 2000 + 1 end, md5('b' || i / 100)::uuid, i % 100,
            'a@d1.example', jsonb_build_array('c' || i || '@example.com'), 'Hi', 'react', 'generic',
            (array['queued', 'sent', 'sent', 'sent', 'failed'])[i % 5 + 1], now() - make_interval(mins => i), now()
       from generate_series(1, 200000) i`,
  `insert into email_events (email_id, kind, occurred_at) select md5('e' || (i + 1) / 2)::uuid, case when i % 2 = 1 then 'queued' else 'sent' end, now() from generate_series(1, 400000) i`,
  `insert into email_idempotency_keys (tenant_id, key, request_hash, delivery_id, email_ids, created_at)
     select i % 2000 + 1, 'key:k' || i, md5('h' || i) || md5('h' || i), md5('e' || i)::uuid, '[]', now() - make_interval(mins => i) from generate_series(1, 100000) i`,
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

const someIds = [randomUUID(), randomUUID(), randomUUID()];
const claim = { tenantId: TENANT, key: 'key:k77', requestHash: 'a'.repeat(64), deliveryId: randomUUID(), emailIds: someIds };

const POINT_QUERIES: Record<string, (em: EntityManager) => Promise<unknown>> = {
  'sender look-up (findEmailSender)': (em) => findEmailSender(em, randomUUID()),
  'key claim (claimEmailKey)': (em) => claimEmailKey(em, claim),
  'key read (findEmailKey)': (em) => findEmailKey(em, TENANT, 'key:k77'),
  'key answer (storeEmailKeyResponse)': (em) => storeEmailKeyResponse(em, claim, { success: true }),
  'key delivery not started (markEmailKeyDispatchFailed)': (em) => markEmailKeyDispatchFailed(em, claim),
  'stopped delivery (endQueuedEmailsOfStoppedDelivery)': (em) => endQueuedEmailsOfStoppedDelivery(em, someIds, 'Delivery stopped: test'),
  'queued e-mails of a delivery (loadQueuedEmails)': (em) => loadQueuedEmails(em, someIds),
  'delivery outcomes (recordDeliveryOutcomes)': (em) =>
    recordDeliveryOutcomes(em, someIds.map((id) => ({ id, kind: 'sent' as const, messageId: `<${id}@x.example>`, response: '250 ok' }))),
  'one e-mail (findEmail)': (em) => findEmail(em, TENANT, randomUUID()),
  'history of a page (listEmailEvents)': (em) => listEmailEvents(em, someIds),
};

const LISTS: Record<string, EmailFilter> = {
  'no filter': {},
  status: { status: 'failed' },
  batch: { batchId: randomUUID() },
  'created before': { createdBefore: new Date(Date.now() - 30 * 60_000) },
};

describe('e-mail query plans on large tables', () => {
  it.each(Object.entries(POINT_QUERIES))('%s reads a few rows through indexes', async (_name, run) => {
    const bad = (await plansOf(run)).map(({ sql, plan }) => ({ sql, findings: planFindings(plan, { large: LARGE, maxRows: 1_000 }) })).filter((p) => p.findings.length > 0);
    expect(bad).toEqual([]);
  });

  it.each(Object.entries(LISTS))("a big sender's e-mail list filtered by %s reads its page in index order", async (_name, filter) => {
    const [only, ...rest] = await plansOf((em) => listEmails(em, { tenantId: TENANT, filter, limit: 51 }));
    expect(rest).toEqual([]);
    expect(planFindings(only!.plan, { large: LARGE, maxRows: Infinity })).toEqual([]);
    expect(sortsMoreThan(only!.plan, 100)).toBe(false);
  });
});
