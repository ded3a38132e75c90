import { randomUUID } from 'node:crypto';
import type { TestApp } from './harness.ts';
import { createMerchantTenant, merchantAccount, oneOffProduct, type MerchantTenant } from './payments.ts';

/** A tenant for the generic API: its `payments-api` product with high velocity limits, two live sandbox MIDs at different banks. */
export async function createPaymentsApiTenant(app: TestApp, options: { rateLimitPerMinute?: number } = {}): Promise<MerchantTenant> {
  return createMerchantTenant(app, {
    ...options,
    products: [oneOffProduct('payments-api', '0.00')],
    merchantAccounts: [
      merchantAccount('PA-1', { acquiringBank: 'Bank 1', monthlyCap: 1_000_000 }),
      merchantAccount('PA-2', { acquiringBank: 'Bank 2', monthlyCap: 999_999 }),
    ],
  });
}

export function paymentBody(number: string, overrides: Record<string, unknown> = {}) {
  return {
    amount: 1999,
    currency: 'USD',
    card: { number, exp_month: 12, exp_year: new Date().getFullYear() + 2, cvc: '123', name: 'Ada Lovelace' },
    email: `buyer-${randomUUID().slice(0, 8)}@example.com`,
    ...overrides,
  };
}

export async function call(app: TestApp, method: 'GET' | 'POST', path: string, apiKey: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}
