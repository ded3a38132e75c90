import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { TestApp } from './harness.ts';
import { createTestTenant, type TestTenant } from './tenants.ts';

export interface PaymentTenant extends TestTenant {
  readonly productId: number;
  readonly planProductId: number;
  readonly mids: string[];
}

/** A tenant with a one-off product, a subscription product and two live sandbox MIDs at different banks. */
export async function createPaymentTenant(app: TestApp, options: { acceptedNetworks?: string[]; cardSubmitLimit?: number } = {}): Promise<PaymentTenant> {
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
    merchantAccounts: mids.map((mid, index) => ({
      mid,
      title: `MID ${index + 1}`,
      gateway: 'sandbox',
      acquiringBank: `Bank ${index + 1}`,
      descriptor: `SHOP*${index + 1}`,
      fullyLive: true,
      maxPrice: '1000.00',
      monthlyCap: 1_000_000 - index,
      allowRetriesFromOtherMids: true,
      allowInsufficientFundsRetries: true,
      currencies: [{ currency: 'USD', gatewayCredentials: { apiKey: `sandbox-${index}` } }],
    })),
    webhookEndpoints: [],
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
