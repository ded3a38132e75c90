import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFixture } from '../services/provisioning/parse-fixture.ts';
import { provision } from '../services/provisioning/provision.ts';
import { screenSubmit } from '../services/payments/screening.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { merchantAccount, post, submitBody } from './support/payments.ts';

/**
 * The gateway keeps the products it sells in memory (services/catalog/product-cache.ts) and drops one when
 * PostgreSQL announces its change (`catalog_changes`, migration 000014). What a user must never notice: a
 * submit that starts after a change was announced pays the product as changed; a tenant never reaches another
 * tenant's product; velocity holds however many submits of one card arrive at once.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
});
afterAll(() => app?.close());

const APPROVED = '4242424242424242';
const NETWORK_B = '5555555555554444';

interface Shop {
  readonly tenantId: number;
  readonly productId: number;
  readonly apiKey: string;
  /** Provisions the same tenant again with the product changed: the admin path. */
  reprovision(product: Record<string, unknown>): Promise<void>;
}

async function openShop(product: Record<string, unknown> = {}): Promise<Shop> {
  const unique = randomUUID().slice(0, 8);
  const apiKey = `sk_test_${randomUUID().replaceAll('-', '')}`;
  const fixture = (overrides: Record<string, unknown>) =>
    parseFixture({
      tenants: [
        {
          slug: `cache-${unique}`,
          name: `Cache ${unique}`,
          clientId: `cache-${unique}`,
          apiKeys: [{ name: 'default', value: apiKey }],
          products: [{ slug: 'ebook', name: 'E-book', price: '10.00', currency: 'USD', acceptedNetworks: ['NetworkA', 'NetworkB'], velocity: { cardSubmitLimit: 50, emailSubmitLimit: 50 }, ...overrides }],
          merchantAccounts: [merchantAccount(`MID-CACHE-${unique}`)],
          webhookEndpoints: [],
        },
      ],
    });
  const run = (overrides: Record<string, unknown>) =>
    provision({ em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor: 'test' }, fixture(overrides));
  const [result] = await run(product);
  const [tenantId, productId] = [result!.id, result!.products[0]!.id];
  // Announcements arrive in commit order: once a news sent after the provisioning is heard, so is the product's
  // creation, which would otherwise keep the first submit's read out of the cache (it may have read the row before the
  // news). The news names a product no tenant has: one of this product would be heard as early as its creation's (a
  // waiter asked after the creation committed may be woken by the creation itself, and the later news then drops the
  // first submit's entry).
  const sentinel = Math.floor(Math.random() * 1_000_000_000) + 1;
  const settled = app.productCache.nextChange(0, sentinel);
  await app.orm.em.fork().execute(`select pg_notify('catalog_changes', ?)`, [`0/${sentinel}`]);
  await settled;
  return {
    tenantId,
    productId,
    apiKey,
    reprovision: async (changed) => void (await run({ ...product, ...changed })),
  };
}

const submit = (shop: Shop, pan = APPROVED, body: Record<string, unknown> = {}) => post(app, `/api/${shop.productId}`, shop.apiKey, submitBody(pan, body));
const sql = (statement: string, params: unknown[] = []) => app.orm.em.fork().execute(statement, params);

/** A change PostgreSQL does not announce (triggers off for its transaction): a cached product does not see it. */
async function unannouncedChange(statement: string, params: unknown[]): Promise<void> {
  await app.orm.em.fork().transactional(async (tx) => {
    await tx.execute(`set local session_replication_role = replica`);
    await tx.execute(statement, params);
  });
}

describe('product cache', () => {
  it('pays a warm submit from memory, and the very next submit after a change is announced pays the product as changed', async () => {
    const shop = await openShop();
    expect((await submit(shop)).body).toMatchObject({ info: 'Success', amount: 10 });
    // Not announced, so not seen: the warm submit really read its product from memory.
    await unannouncedChange(`update products set price = '15.00' where id = ?`, [shop.productId]);
    expect((await submit(shop)).body).toMatchObject({ info: 'Success', amount: 10 });

    // The admin path: price and accepted networks.
    let announced = app.productCache.nextChange(shop.tenantId, shop.productId);
    await shop.reprovision({ price: '11.00', acceptedNetworks: ['NetworkA'] });
    await announced;
    expect((await submit(shop)).body).toMatchObject({ info: 'Success', amount: 11 });
    expect((await submit(shop, NETWORK_B)).body).toMatchObject({ info: 'Failed', error: 'NetworkB cards not supported', submitOrderId: 0 });

    // Plain SQL.
    announced = app.productCache.nextChange(shop.tenantId, shop.productId);
    await sql(`update products set price = '12.00', accepted_networks = '{NetworkA,NetworkB}' where id = ?`, [shop.productId]);
    await announced;
    expect((await submit(shop, NETWORK_B)).body).toMatchObject({ info: 'Success', amount: 12 });
    expect((await submit(shop, APPROVED, { amount: 11 })).status).toBe(400);
  });

  it('counts velocity against the limits as committed, announced or not', async () => {
    const shop = await openShop({ velocity: { cardSubmitLimit: 50, emailSubmitLimit: 50 } });
    expect((await submit(shop)).body.info).toBe('Success');
    expect((await submit(shop)).body.info).toBe('Success');

    const announced = app.productCache.nextChange(shop.tenantId, shop.productId);
    await shop.reprovision({ velocity: { cardSubmitLimit: 2, emailSubmitLimit: 50 } });
    await announced;
    expect((await submit(shop)).body).toMatchObject({ info: 'LimitReached', error: 'CC entered too many times in quick succession' });

    await unannouncedChange(`update products set card_submit_limit = 3 where id = ?`, [shop.productId]);
    expect((await submit(shop)).body.info).toBe('Success');
    expect((await submit(shop)).body).toMatchObject({ info: 'LimitReached', error: 'CC entered too many times in quick succession' });
  });

  it('never answers one tenant with another tenant product it holds', async () => {
    const [first, second] = [await openShop(), await openShop()];
    expect((await submit(first)).body.info).toBe('Success');
    const intruder = await post(app, `/api/${first.productId}`, second.apiKey, submitBody(APPROVED));
    expect(intruder.status).toBe(404);
    expect(JSON.stringify(intruder.body)).toContain(`Product ${first.productId} not found`);
    expect((await submit(first)).body.info).toBe('Success');
  });

  it('forgets every product when its notification connection is lost, and reads them as committed once it listens again', async () => {
    const shop = await openShop();
    expect((await submit(shop)).body).toMatchObject({ info: 'Success', amount: 10 });
    await unannouncedChange(`update products set price = '14.00' where id = ?`, [shop.productId]);
    expect((await submit(shop)).body).toMatchObject({ info: 'Success', amount: 10 });

    // Every gateway listening on this database loses its connection (others only read from the database meanwhile).
    const back = app.productCache.nextListening();
    await sql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query = 'listen catalog_changes'`);
    await back;
    expect((await submit(shop)).body).toMatchObject({ info: 'Success', amount: 14 });
  });
});

describe('screening in one round trip under concurrency', () => {
  const screen = (shop: Shop, submit: { email: string; cardFingerprint: string }) =>
    screenSubmit(app.orm.em.fork(), { tenantId: shop.tenantId, productId: shop.productId, bin: '42424242', network: 'NetworkA', hasSubscriptionPlan: false, reserveOrderId: false, ...submit });

  it('passes exactly the card limit when one card is screened thirty times at once, and records exactly those', async () => {
    const shop = await openShop({ velocity: { cardSubmitLimit: 4, emailSubmitLimit: 1000 } });
    const cardFingerprint = `fp-${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 30 }, (_, index) => screen(shop, { email: `card-${index}@example.com`, cardFingerprint })));

    expect(results.filter((result) => result.ok)).toHaveLength(4);
    for (const result of results.filter((result) => !result.ok)) expect(result).toEqual({ ok: false, info: 'LimitReached', error: 'CC entered too many times in quick succession' });
    const [row] = await sql(`select count(*)::int as attempts from submit_attempts where card_fingerprint = ?`, [cardFingerprint]);
    expect(row).toEqual({ attempts: 4 });
  });

  it('passes exactly the e-mail limit when one e-mail is screened with thirty cards at once', async () => {
    const shop = await openShop({ velocity: { cardSubmitLimit: 1000, emailSubmitLimit: 3 } });
    const email = `same-${randomUUID().slice(0, 8)}@example.com`;
    const results = await Promise.all(Array.from({ length: 30 }, () => screen(shop, { email, cardFingerprint: `fp-${randomUUID()}` })));

    expect(results.filter((result) => result.ok)).toHaveLength(3);
    for (const result of results.filter((result) => !result.ok)) expect(result).toEqual({ ok: false, info: 'LimitReached', error: 'Email entered too many times for this product' });
    const [row] = await sql(`select count(*)::int as attempts from submit_attempts where product_id = ? and email = ?`, [shop.productId, email]);
    expect(row).toEqual({ attempts: 3 });
  });
});
