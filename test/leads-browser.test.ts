import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createLeadTenant, type LeadTenant } from './support/leads.ts';

/**
 * The `/leads.js` snippet in a real headless Chromium: checkout pages served by this test on 127.0.0.1, the gateway
 * on another port (so every lead write is a cross-origin request, with its CORS preflight).
 */
let app: TestApp;
let tenant: LeadTenant;
let browser: BrowserContext;
let profile: string;
const shops: { server: Server; origin: string }[] = [];

/** A checkout site: every path is a page that loads the snippet with the tenant's publishable key. */
async function startShop(snippetUrl: string, key: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    if (request.url === '/favicon.ico') return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><title>${request.url}</title><script src="${snippetUrl}" data-key="${key}"></script>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createLeadTenant(app);
  const snippetUrl = `${app.baseUrl}/leads.js`;
  shops.push(await startShop(snippetUrl, tenant.keys.test.publishableKey), await startShop(snippetUrl, tenant.keys.test.publishableKey));
  // Only the first shop's origin is allowed.
  await app.orm.em.fork().getConnection().execute(`update applications set lead_allowed_origins = array[?] where tenant_id = ?`, [shops[0]!.origin, tenant.id]);
  profile = mkdtempSync(path.join(os.tmpdir(), 'leads-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    // Debian's chromium (`.ci/run` installs it); a test without a browser fails, it never skips.
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  for (const { server } of shops) await new Promise((resolve) => server.close(resolve));
  await app?.close();
});

async function storedLead(sessionId: string) {
  const rows = await app.orm.em.fork().getConnection().execute(`select id, email, scans, status from customer_leads where tenant_id = ? and session_id = ?`, [tenant.id, sessionId]);
  return rows[0];
}

/** What the snippet puts on `window` (this project type-checks without the DOM library). */
interface ShopWindow {
  ServiceLeads: { sessionId(): string; identify(fields: Record<string, string | null>): Promise<{ id: string; status: string }>; ready: Promise<unknown>; reset(): string };
}

it('records the lead of a checkout from an allowed origin and updates it as the customer moves on', async () => {
  const page = await browser.newPage();
  await page.goto(`${shops[0]!.origin}/cart`);
  const sessionId = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId());
  expect(sessionId).toMatch(/^.{1,50}$/);
  // A page passing what it does not know as null still writes the lead: the snippet leaves those fields out.
  const created = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.identify({ email: 'shopper@example.com', first_name: 'Sam', phone: null }));
  expect(created).toMatchObject({ status: 'lead' });
  expect(await storedLead(sessionId)).toMatchObject({ email: 'shopper@example.com', scans: [{ page: '/cart' }] });

  await page.goto(`${shops[0]!.origin}/payment`);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId())).toBe(sessionId);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.ready)).toMatchObject({ id: created.id });
  const lead = await storedLead(sessionId);
  expect(lead!.scans.map((scan: { page: string }) => scan.page)).toEqual(['/cart', '/payment']);
  await page.close();
});

it('is blocked by CORS on a page of another origin, and nothing is stored', async () => {
  const page = await browser.newPage();
  await page.goto(`${shops[1]!.origin}/cart`);
  const sessionId = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId());
  const outcome = await page.evaluate(() =>
    (globalThis as unknown as ShopWindow).ServiceLeads.identify({ email: 'elsewhere@example.com' }).then(
      () => 'stored',
      (error: Error) => `${error.name}: ${error.message}`,
    ),
  );
  expect(outcome).toMatch(/^TypeError: Failed to fetch/);
  expect(await storedLead(sessionId)).toBeUndefined();
  await page.close();
});

it('starts a lead of its own for the next checkout in the tab once reset after a payment, and cuts a page path too long to keep', async () => {
  const page = await browser.newPage();
  await page.goto(`${shops[0]!.origin}/cart`);
  const first = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId());
  await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.identify({ email: 'first@example.com' }));
  // The checkout paid: the page resets the snippet, and the next checkout of this tab is another lead.
  const second = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.reset());
  expect(second).not.toBe(first);
  await page.goto(`${shops[0]!.origin}/${'p'.repeat(3000)}`);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId())).toBe(second);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.identify({ email: 'second@example.com' }))).toMatchObject({ status: 'lead' });
  const lead = await storedLead(second);
  expect(lead).toMatchObject({ email: 'second@example.com' });
  expect(lead!.scans.map((scan: { page: string }) => scan.page.length)).toEqual([2048]);
  expect(await storedLead(first)).toMatchObject({ email: 'first@example.com' });
  await page.close();
});

it('keeps no field the gateway refuses, so the checkout goes on writing its lead', async () => {
  const page = await browser.newPage();
  await page.goto(`${shops[0]!.origin}/cart`);
  const sessionId = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId());
  await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.identify({ email: 'kept@example.com', phone: '+1 555 0100' }));
  // A phone over the 50 characters a lead keeps: refused, naming the field, and not kept in the tab.
  const refused = await page.evaluate(() =>
    (globalThis as unknown as ShopWindow).ServiceLeads.identify({ first_name: 'Ana', phone: '5'.repeat(51) }).then(
      () => undefined,
      (error: Error & { status: number; code: string; details: string[] }) => ({ status: error.status, code: error.code, details: error.details }),
    ),
  );
  expect(refused).toMatchObject({ status: 422, code: 'validation_failed', details: [expect.stringMatching(/^phone: /)] });
  // The next page's scan and the next identify are written, with the contact the gateway last took.
  await page.goto(`${shops[0]!.origin}/payment`);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.ready)).toMatchObject({ status: 'lead' });
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.identify({ last_name: 'Silva' }))).toMatchObject({ status: 'lead' });
  const rows = await app.orm.em.fork().getConnection().execute(`select phone, first_name, last_name, scans from customer_leads where tenant_id = ? and session_id = ?`, [tenant.id, sessionId]);
  // The refused phone is not sent again (the gateway keeps the one it took); the valid name given with it is.
  expect(rows[0]).toMatchObject({ phone: '+1 555 0100', first_name: 'Ana', last_name: 'Silva' });
  expect(rows[0]!.scans.map((scan: { page: string }) => scan.page)).toEqual(['/cart', '/payment']);
  await page.close();
});

it('trims a tab that holds more CFA/D2D fields than a write takes (kept by an older snippet) to 50 once refused, and writes again', async () => {
  const page = await browser.newPage();
  await page.goto(`${shops[0]!.origin}/cart`);
  const sessionId = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId());
  await page.evaluate((session) => {
    const contact = { email: 'old-tab@example.com', ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`cfa_old_${i}`, String(i)])) };
    (globalThis as unknown as { sessionStorage: { setItem(key: string, value: string): void } }).sessionStorage.setItem('service_leads', JSON.stringify({ session_id: session, scans: [], contact }));
  }, sessionId);
  // This page's scan is refused (60 fields) and the tab keeps its first 50; the next page's scan is written.
  await page.goto(`${shops[0]!.origin}/shipping`);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.ready)).toBeNull();
  await page.goto(`${shops[0]!.origin}/payment`);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.ready)).toMatchObject({ status: 'lead' });
  const rows = await app.orm.em.fork().getConnection().execute(`select tracking_fields from customer_leads where tenant_id = ? and session_id = ?`, [tenant.id, sessionId]);
  expect(Object.keys(rows[0]!.tracking_fields).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `cfa_old_${i}`).sort());
  await page.close();
});

it('mends a tab whose scans the gateway refuses: a body too large loses its oldest scans, and a page is never kept with a NUL', async () => {
  const page = await browser.newPage();
  await page.goto(`${shops[0]!.origin}/cart`);
  const sessionId = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId());
  await page.evaluate((session) => {
    // 500 scans of 900 characters (an older tab's): about 466 KB, over the 256 KiB a write takes.
    const scans = Array.from({ length: 500 }, (_, i) => ({ page: `/p${i}/${'x'.repeat(890)}`, at: new Date().toISOString() }));
    (globalThis as unknown as { sessionStorage: { setItem(key: string, value: string): void } }).sessionStorage.setItem(
      'service_leads',
      JSON.stringify({ session_id: session, scans, contact: { email: 'big-tab@example.com' } }),
    );
  }, sessionId);
  await page.goto(`${shops[0]!.origin}/shipping`);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.ready)).toBeNull();
  await page.goto(`${shops[0]!.origin}/payment`);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.ready)).toMatchObject({ status: 'lead' });
  const scanned = await page.evaluate(() => (globalThis as unknown as { ServiceLeads: { scan(page: string): Promise<unknown> } }).ServiceLeads.scan('/re\u0000view'));
  expect(scanned).toMatchObject({ status: 'lead' });
  const rows = await app.orm.em.fork().getConnection().execute(`select scans from customer_leads where tenant_id = ? and session_id = ?`, [tenant.id, sessionId]);
  const pages: string[] = rows[0]!.scans.map((scan: { page: string }) => scan.page);
  expect(pages.length).toBeLessThan(300);
  expect(pages.slice(-2)).toEqual(['/payment', '/review']);
  await page.close();
});

it('keeps none of the CFA/D2D fields of a call that went over the 50 a write takes, and the ones kept before', async () => {
  const page = await browser.newPage();
  await page.goto(`${shops[0]!.origin}/cart`);
  const sessionId = await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.sessionId());
  await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.identify({ email: 'tracked@example.com', cfa_device: 'ios', d2d_rep: 'r-7' }));
  // 50 more: 52 in the tab, over what one write takes. The gateway names the fields as a whole, none of them alone.
  const refused = await page.evaluate(() => {
    // With a field the lead already holds, changed: that one is no new field and stays in the tab.
    const many = { cfa_device: 'android', ...Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`cfa_extra_${i}`, String(i)])) };
    return (globalThis as unknown as ShopWindow).ServiceLeads.identify(many).then(
      () => undefined,
      (error: Error & { status: number; details: string[] }) => ({ status: error.status, details: error.details }),
    );
  });
  expect(refused).toMatchObject({ status: 422, details: [expect.stringMatching(/^cfa_\*\/d2d_\*: /)] });
  // The tab writes again, with the two fields it had before the refused call (one as that call changed it).
  await page.goto(`${shops[0]!.origin}/payment`);
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.ready)).toMatchObject({ status: 'lead' });
  expect(await page.evaluate(() => (globalThis as unknown as ShopWindow).ServiceLeads.identify({ cfa_campaign: 'spring' }))).toMatchObject({ status: 'lead' });
  const rows = await app.orm.em.fork().getConnection().execute(`select tracking_fields, scans from customer_leads where tenant_id = ? and session_id = ?`, [tenant.id, sessionId]);
  expect(rows[0]!.tracking_fields).toEqual({ cfa_device: 'android', d2d_rep: 'r-7', cfa_campaign: 'spring' });
  expect(rows[0]!.scans.map((scan: { page: string }) => scan.page)).toEqual(['/cart', '/payment']);
  await page.close();
});
