import { randomUUID } from 'node:crypto';
import type { TestApp } from './harness.ts';
import { createTestTenant, type TestTenant } from './tenants.ts';

export interface EmailTenant extends TestTenant {
  readonly tenantKey: string;
  readonly domain: string;
}

/** A tenant allowed to send from its own fresh domain, with a known `tenant_key`; extra fixture fields merge in. */
export async function createEmailTenant(app: TestApp, extra: Record<string, unknown> = {}): Promise<EmailTenant> {
  const tenantKey = randomUUID();
  const domain = `shop-${randomUUID().slice(0, 8)}.example`;
  const tenant = await createTestTenant(app, { email: { tenantKey, senderDomains: [domain] }, ...extra });
  return { ...tenant, tenantKey, domain };
}

/** A recipient address no other test uses, so the SMTP sink's counts are this test's. */
export const newRecipient = (label = 'customer') => `${label}-${randomUUID().slice(0, 8)}@inbox.example`;

export interface EmailAnswer {
  readonly status: number;
  readonly body: any;
  readonly headers: Headers;
}

export async function postEmail(app: TestApp, path: '/api/email' | '/api/email/batch', body: unknown): Promise<EmailAnswer> {
  const response = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

export async function gql(app: TestApp, authorization: string, query: string, variables: Record<string, unknown> = {}): Promise<{ data?: any; errors?: any[] }> {
  const response = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: any; errors?: any[] };
}

const EMAIL_FIELDS = 'id batchId batchIndex from to cc bcc replyTo subject templateType templateName status attemptCount smtpMessageId smtpResponse failureReason events { kind detail occurredAt } completedAt';

/** The e-mail as its tenant reads it over GraphQL (null when the key's tenant has no such e-mail). */
export async function readEmail(app: TestApp, apiKey: string, id: string): Promise<any> {
  const answer = await gql(app, `Bearer ${apiKey}`, `query($id: UUID!) { email(id: $id) { ${EMAIL_FIELDS} } }`, { id });
  if (answer.errors) throw new Error(JSON.stringify(answer.errors));
  return answer.data.email;
}

export async function listTenantEmails(app: TestApp, apiKey: string, args: Record<string, unknown> = {}): Promise<any[]> {
  const answer = await gql(
    app,
    `Bearer ${apiKey}`,
    `query($status: String, $batchId: UUID, $first: Int) { emails(status: $status, batchId: $batchId, first: $first) { edges { node { ${EMAIL_FIELDS} } } pageInfo { hasNextPage } } }`,
    args,
  );
  if (answer.errors) throw new Error(JSON.stringify(answer.errors));
  return answer.data.emails.edges.map((edge: { node: unknown }) => edge.node);
}

/** Waits until the e-mail has left `queued` (sent or failed), reading it as its tenant does. */
export async function settledEmail(app: TestApp, apiKey: string, id: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const email = await readEmail(app, apiKey, id);
    if (email && email.status !== 'queued') return email;
    if (Date.now() > deadline) throw new Error(`e-mail ${id} still ${email?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
