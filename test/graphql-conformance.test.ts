import { readFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGatewaySchema } from '../api/graphql/schema.ts';
import { startTestApp, type TestApp } from './support/harness.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe('GraphQL over HTTP (graphql-http server audit)', () => {
  it('passes every MUST of the audit with no error', async () => {
    // The audit asks for `__type`, which only authenticated callers may introspect: it runs with the operator token.
    const authenticatedFetch: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${app.config.operatorToken}`);
      return fetch(input, { ...init, headers });
    };
    const results = await Promise.all(serverAudits({ url: `${app.baseUrl}/graphql`, fetchFn: authenticatedFetch }).map(async (audit) => ({ audit, result: await audit.fn() })));
    const errors = results.filter(({ result }) => result.status === 'error').map(({ audit, result }) => `${audit.name}: ${"reason" in result ? result.reason : ""}`);
    expect(errors).toEqual([]);
    expect(results.length).toBeGreaterThan(20);
  });
});

describe('persisted queries', () => {
  it('are not taken: a request carrying one is refused with a code of its own, never as an internal error', async () => {
    for (const persistedQuery of [{ version: 1, sha256Hash: 'abc' }, { version: 2, sha256Hash: 'abc' }]) {
      const response = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${app.config.operatorToken}` },
        body: JSON.stringify({ query: '{ statuses { count } }', extensions: { persistedQuery } }),
      });
      const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code, JSON.stringify(body)).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
      // Apollo's protocol: 200, so that a client sending hashes falls back to sending the document.
      expect(response.status).toBe(200);
    }
  });
});

describe('committed SDL', () => {
  it('matches the schema the gateway serves (run `npm run schema:emit` after changing GraphQL types)', async () => {
    const committed = readFileSync(new URL('../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(`${printSchema(await buildGatewaySchema())}\n`);
  });
});
