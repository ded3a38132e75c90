import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { workflowIds } from '../../workflows/contract/workflow-ids.ts';
import type { TestApp } from './harness.ts';
import { createTestTenant, type TestTenant } from './tenants.ts';

export interface PaymentTenant extends TestTenant {
  readonly productId: number;
  readonly planProductId: number;
  readonly mids: string[];
}

/** A merchant account of a provisioning fixture (README 'Provisioning'): a live sandbox MID taking USD up to 1000.00, unless overridden. */
export function merchantAccount(mid: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    mid,
    title: mid,
    gateway: 'sandbox',
    acquiringBank: `Bank of ${mid}`,
    descriptor: `SHOP*${mid}`.slice(0, 22),
    fullyLive: true,
    maxPrice: '1000.00',
    monthlyCap: 1_000_000,
    allowRetriesFromOtherMids: true,
    allowInsufficientFundsRetries: true,
    currencies: [{ currency: 'USD', gatewayCredentials: { apiKey: `sandbox-${mid}` } }],
    ...overrides,
  };
}

/** A one-off product of a provisioning fixture, with velocity limits high enough not to interfere. */
export function oneOffProduct(slug: string, price: string, currency = 'USD', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { slug, name: slug, price, currency, acceptedNetworks: ['NetworkA', 'NetworkB'], velocity: { cardSubmitLimit: 100, emailSubmitLimit: 100 }, ...overrides };
}

export interface MerchantTenant extends TestTenant {
  /** Product id by fixture slug. */
  readonly products: Record<string, number>;
  /** The real MID of each fixture name (MIDs are unique across tenants, so each tenant gets its own suffix). */
  readonly mids: Record<string, string>;
}

/**
 * A tenant with the given products and merchant accounts. Merchant accounts are given by a short name
 * (`mid` of the builder), made unique for this tenant; they are provisioned in the order given.
 */
export async function createMerchantTenant(
  app: TestApp,
  fixture: { products: Record<string, unknown>[]; merchantAccounts: Record<string, unknown>[]; rateLimitPerMinute?: number },
): Promise<MerchantTenant> {
  const unique = randomUUID().slice(0, 8);
  const mids = Object.fromEntries(fixture.merchantAccounts.map((account) => [account.mid as string, `${account.mid as string}-${unique}`]));
  const tenant = await createTestTenant(app, {
    products: fixture.products,
    merchantAccounts: fixture.merchantAccounts.map((account) => ({ ...account, mid: mids[account.mid as string] })),
    webhookEndpoints: [],
    ...(fixture.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: fixture.rateLimitPerMinute }),
  });
  const products = Object.fromEntries(tenant.result.products.map((product) => [product.slug, product.id]));
  return { ...tenant, products, mids };
}

/** A tenant with a one-off product, a subscription product and two live sandbox MIDs at different banks. */
export async function createPaymentTenant(
  app: TestApp,
  options: { acceptedNetworks?: string[]; cardSubmitLimit?: number; rateLimitPerMinute?: number } = {},
): Promise<PaymentTenant> {
  const unique = randomUUID().slice(0, 8);
  const mids = [`MID-A-${unique}`, `MID-B-${unique}`];
  const tenant = await createTestTenant(app, {
    products: [
      {
        slug: 'ebook',
        name: 'E-book',
        price: '19.99',
        currency: 'USD',
        acceptedNetworks: options.acceptedNetworks ?? ['NetworkA', 'NetworkB'],
        velocity: { cardSubmitLimit: options.cardSubmitLimit ?? 50, emailSubmitLimit: 50 },
      },
      {
        slug: 'membership',
        name: 'Membership',
        price: '29.99',
        currency: 'USD',
        subscriptionPlan: { recurringAmount: '29.99', intervalDays: 30, gracePeriodDays: 3 },
        velocity: { cardSubmitLimit: 50, emailSubmitLimit: 50 },
      },
    ],
    merchantAccounts: mids.map((mid, index) =>
      merchantAccount(mid, { title: `MID ${index + 1}`, acquiringBank: `Bank ${index + 1}`, descriptor: `SHOP*${index + 1}`, monthlyCap: 1_000_000 - index }),
    ),
    webhookEndpoints: [],
    ...(options.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: options.rateLimitPerMinute }),
  });
  const [product, plan] = tenant.result.products;
  return { ...tenant, productId: product!.id, planProductId: plan!.id, mids };
}

export function card(pan: string, overrides: Record<string, unknown> = {}) {
  return { name: 'Ada Lovelace', pan, expiryMonth: 12, expiryYear: new Date().getFullYear() + 2, cvv: '123', ...overrides };
}

export function submitBody(pan: string, overrides: Record<string, unknown> = {}) {
  return {
    card: card(pan),
    email: `buyer-${randomUUID().slice(0, 8)}@example.com`,
    partnerSession: `ps-${randomUUID().slice(0, 12)}`,
    address: { firstName: 'Ada', lastName: 'Lovelace', street: '1 Main St', city: 'London', state: 'LDN', zip: 'N1', country: 'GB' },
    ...overrides,
  };
}

export async function post(app: TestApp, path: string, apiKey: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: apiKey, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** Real authorizations the sandbox processed for one submit order. */
export async function authorizationsFor(submitOrderId: number): Promise<number> {
  const stats = (await (await fetch(`${inject('sandboxProcessorUrl')}/v1/_stats`)).json()) as { byOrderReference: Record<string, number> };
  return stats.byOrderReference[`ord${submitOrderId}`] ?? 0;
}

/** The local activities a finished payment ran, in order, read from its history's markers (as the Temporal UI shows them). */
export async function localActivitiesOf(app: TestApp, tenantId: number, submitOrderId: number): Promise<string[]> {
  const handle = app.temporal.client.workflow.getHandle(workflowIds.payment(tenantId, submitOrderId));
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
    return data ? [(JSON.parse(Buffer.from(data).toString()) as { activity_type: string }).activity_type] : [];
  });
}

/**
 * Dates the tenant's last card-key rotation an hour back, so its next one is not refused as too soon (a tenant's key
 * rotates at most once a minute): for a test that rotates twice in a row to test something else.
 */
export async function ageCardKeys(app: TestApp, tenantId: number): Promise<void> {
  await app.orm.em.fork().execute(`update tenants set card_key_rotated_at = card_key_rotated_at - interval '1 hour' where id = ?`, [tenantId]);
}
