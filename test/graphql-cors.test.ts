import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant, type TestTenant } from './support/tenants.ts';

/** An admin UI on another origin calling /graphql from a browser: what its preflight and answers carry. */
let app: TestApp;
let tenant: TestTenant;
const ADMIN = 'https://admin.example';

beforeAll(async () => {
  // Written as an operator might: upper case and the default port, matched as browsers send the origin.
  app = await startTestApp({ GRAPHQL_ALLOWED_ORIGINS: 'https://Admin.example:443, http://localhost:5173' });
  tenant = await createTestTenant(app);
});
afterAll(() => app?.close());

const preflight = (origin: string) =>
  fetch(`${app.baseUrl}/graphql`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
const query = (origin: string) =>
  fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${tenant.apiKey}` },
    body: JSON.stringify({ query: '{ statuses(pageSize: 1) { count } }' }),
  });

describe('GraphQL from an admin UI in a browser', () => {
  it('answers the preflight of a configured origin, exactly, and lets its page read the answers', async () => {
    for (const origin of [ADMIN, 'http://localhost:5173']) {
      const allowed = await preflight(origin);
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(origin);
      expect(allowed.headers.get('access-control-allow-methods')).toBe('GET, POST');
      expect(allowed.headers.get('access-control-allow-headers')).toContain('authorization');
      expect(allowed.headers.get('vary')).toContain('Origin');
    }
    const answer = await query(ADMIN);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe(ADMIN);
    expect(((await answer.json()) as { data?: unknown }).data).toBeDefined();
    // A refusal is readable too: the page learns why.
    const refused = await fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers: { origin: ADMIN, 'content-type': 'application/json' }, body: '{"query": ' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe(ADMIN);
  });

  it('gives any other origin no CORS header and refuses its preflight 403, with a wildcard never', async () => {
    for (const origin of ['https://evil.example', 'https://admin.example.evil', 'https://admin.example:8443', 'null']) {
      const refused = await preflight(origin);
      expect(refused.status, origin).toBe(403);
      expect(refused.headers.get('access-control-allow-origin'), origin).toBeNull();
      const answer = await query(origin);
      // The call itself is the key's to allow (a server sends no Origin rule); the browser keeps the answer from the page.
      expect(answer.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
  });
});
