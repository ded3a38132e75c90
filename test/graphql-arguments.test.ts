import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant, type TestTenant } from './support/tenants.ts';

let app: TestApp;
let tenant: TestTenant;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTestTenant(app);
});
afterAll(() => app?.close());

async function ask(query: string, variables?: Record<string, unknown>) {
  const response = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as any;
}

describe('GraphQL argument validation', () => {
  it('answers an out-of-range limit with BAD_USER_INPUT naming the argument', async () => {
    const body = await ask('{ webhookDeliveries(limit: 500) { id } }');
    expect(body.data).toBeNull();
    expect(body.errors).toEqual([
      expect.objectContaining({ message: 'limit must not be greater than 200', extensions: { code: 'BAD_USER_INPUT', field: 'limit' } }),
    ]);
  });

  it('checks arguments sent as variables the same way', async () => {
    const body = await ask('query($tenantId: Int) { webhookEndpoints(tenantId: $tenantId) { id } }', { tenantId: 0 });
    expect(body.errors[0]).toMatchObject({ message: 'tenantId must not be less than 1', extensions: { code: 'BAD_USER_INPUT', field: 'tenantId' } });
  });

  it('lets a valid request through', async () => {
    const body = await ask('{ webhookDeliveries(limit: 200) { id } }');
    expect(body).toEqual({ data: { webhookDeliveries: [] } });
  });
});
