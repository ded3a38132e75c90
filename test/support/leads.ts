import { randomUUID } from 'node:crypto';
import { LEADS_PATH } from '../../api/rest/leads.routes.ts';
import type { LeadEnvironment } from '../../domain/leads/lead-keys.ts';
import { generateWebhookSecret } from '../../domain/crypto/secret-box.ts';
import { generateLeadKeys } from '../../services/leads/lead-keys.ts';
import { onTestFinished } from 'vitest';
import type { TestApp } from './harness.ts';
import { merchantAccount, oneOffProduct } from './payments.ts';
import { createTestTenant, type TestTenant } from './tenants.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';

export interface LeadKeys {
  readonly publishableKey: string;
  readonly secretKey: string;
}

export interface LeadTenant extends TestTenant {
  /** Test and live key pairs of the tenant's first application. */
  readonly keys: Record<LeadEnvironment, LeadKeys>;
  readonly applicationSlug: string;
}

/** A tenant with one application (`shop`) allowing the given origins, and a test and a live lead key pair for it. */
export async function createLeadTenant(app: TestApp, options: { origins?: string[]; extra?: Record<string, unknown> } = {}): Promise<LeadTenant> {
  const applicationSlug = 'shop';
  const tenant = await createTestTenant(app, { applications: [{ slug: applicationSlug, name: 'Shop', allowedOrigins: options.origins ?? [] }], ...options.extra });
  const generate = async (environment: LeadEnvironment) => generateLeadKeys(app.orm.em.fork(), { tenantId: tenant.id, applicationSlug, environment, actor: 'test' });
  return { ...tenant, applicationSlug, keys: { test: await generate('test'), live: await generate('live') } };
}

/**
 * A lead tenant selling one e-book (19.99 USD) through one merchant account, its endpoint taking `customer_lead.paid`
 * at a receiver that answers 204. Call within a test: the receiver closes when the test ends.
 */
export async function createEbookShop(app: TestApp, mid: string) {
  const secret = generateWebhookSecret();
  const receiver = await startWebhookReceiver(secret, () => ({ status: 204 }));
  onTestFinished(() => receiver.close());
  const shop = await createLeadTenant(app, {
    extra: {
      products: [oneOffProduct('ebook', '19.99')],
      merchantAccounts: [merchantAccount(`${mid}-${randomUUID().slice(0, 8)}`)],
      webhookEndpoints: [{ slug: 'leads', url: receiver.url, secret, eventTypes: ['customer_lead.paid'] }],
    },
  });
  return { shop, productId: shop.result.products[0]!.id, receiver };
}

/** A fresh session id, as a checkout would pass it as partnerSession (50 characters or fewer). */
export const newSessionId = () => `sess_${randomUUID()}`;

export interface LeadAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { ok: boolean; data?: any; error?: { code: string; message: string; details: string[] } };
}

async function answer(response: Response): Promise<LeadAnswer> {
  return { status: response.status, headers: response.headers, body: (await response.json()) as LeadAnswer['body'] };
}

/** POST /api/public/customer-leads with a server's secret key, or other headers when given. */
export async function postLead(baseUrl: string, body: unknown, headers: Record<string, string>): Promise<LeadAnswer> {
  const response = await fetch(`${baseUrl}${LEADS_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return answer(response);
}

export async function getLeads(baseUrl: string, query: Record<string, string>, headers: Record<string, string>): Promise<LeadAnswer> {
  return answer(await fetch(`${baseUrl}${LEADS_PATH}?${new URLSearchParams(query).toString()}`, { headers }));
}

export const bearer = (secretKey: string) => ({ authorization: `Bearer ${secretKey}` });

/** A GraphQL call with the given Authorization (an API key or the operator token). */
export async function graphql(baseUrl: string, authorization: string, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: any[] }> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${authorization}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: any; errors?: any[] };
}
