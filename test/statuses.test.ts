import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATUS_CODES } from '../domain/statuses/status-codes.ts';
import { parseSpecStatusCodes, readSpec } from './support/spec-status-codes.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant, type TestTenant } from './support/tenants.ts';

let app: TestApp;
let tenant: TestTenant;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTestTenant(app);
});
afterAll(() => app?.close());

async function listStatuses(query = '', headers: Record<string, string> = tenant.adminHeaders) {
  const response = await fetch(`${app.baseUrl}/api/admin/statuses${query}`, { headers });
  return { status: response.status, body: (await response.json()) as Record<string, any>, headers: response.headers };
}

async function graphql(query: string, variables: Record<string, unknown> = {}, authorization = `Bearer ${tenant.apiKey}`) {
  const response = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe('status-code reference table', () => {
  it('holds exactly the codes of spec 7.5, code by code', async () => {
    const rows = await app.orm.em.fork().execute<Record<string, any>[]>('select * from status_codes order by id');
    const spec = parseSpecStatusCodes(readSpec());
    expect(rows).toHaveLength(spec.length);
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const code of spec) {
      const row = byId.get(code.id);
      expect(row, `code ${code.id} missing`).toBeDefined();
      expect({ id: row!.id, status: row!.status }, `code ${code.id}`).toEqual({ id: code.id, status: code.status });
      expect(
        [row!.successful, row!.is_issuer_decline, row!.is_insufficient_funds, row!.is_invalid_card_details, row!.is_other],
        `flags of ${code.id}`,
      ).toEqual([code.group === 'successful', code.group === 'issuerDecline', code.group === 'insufficientFunds', code.group === 'invalidCardDetails', code.group === 'other']);
      expect(row!.is_gateway_level_status, `gateway-level flag of ${code.id}`).toBe(code.id === 1789);
    }
  });
});

describe('GET /api/admin/statuses', () => {
  it('returns the first page of 50 with the spec 4.9 envelope', async () => {
    const { status, body } = await listStatuses();
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, count: 50, totalCount: STATUS_CODES.length, pageNumber: 1, pageSize: 50, totalPages: Math.ceil(STATUS_CODES.length / 50), moreResults: true });
    expect(body.data[0]).toEqual({
      id: '0',
      status: 'None',
      successful: false,
      isGatewayLevelStatus: false,
      isIssuerDecline: false,
      isInsufficientFunds: false,
      isInvalidCardDetails: false,
      isOther: true,
    });
    const ids = body.data.map((s: { id: string }) => Number(s.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('pages to the last page and past it', async () => {
    const last = Math.ceil(STATUS_CODES.length / 40);
    const { body } = await listStatuses(`?pageSize=40&pageNumber=${last}`);
    expect(body).toMatchObject({ pageNumber: last, pageSize: 40, count: STATUS_CODES.length - 40 * (last - 1), moreResults: false });
    const beyond = await listStatuses(`?pageSize=40&pageNumber=${last + 1}`);
    expect(beyond.body).toMatchObject({ count: 0, totalCount: STATUS_CODES.length, moreResults: false, data: [] });
  });

  it('filters by group flags, combining them with AND', async () => {
    const successful = await listStatuses('?successful=true&pageSize=200');
    expect(successful.body.data.map((s: { id: string }) => s.id)).toEqual(['2636', '3367', '3616', '4165', '4173', '4257']);
    const funds = await listStatuses('?isInsufficientFunds=true');
    expect(funds.body.totalCount).toBe(7);
    const none = await listStatuses('?successful=true&isOther=true');
    expect(none.body.totalCount).toBe(0);
    const notOther = await listStatuses('?isOther=false&pageSize=200');
    expect(notOther.body.totalCount).toBe(STATUS_CODES.filter((c) => c.group !== 'other').length);
  });

  it('searches the description case-insensitively and the id', async () => {
    const byText = await listStatuses('?search=insufficient%20FUNDS');
    expect(byText.body.data.map((s: { id: string }) => s.id)).toEqual(['3512', '3619', '4281']);
    const byId = await listStatuses('?search=1789');
    expect(byId.body.data).toEqual([expect.objectContaining({ id: '1789', status: 'Submitted', isGatewayLevelStatus: true })]);
    const wildcard = await listStatuses('?search=%25');
    expect(wildcard.body.totalCount).toBe(0);
  });

  it.each([
    ['?pageSize=0', 'pageSize'],
    ['?pageSize=201', 'pageSize'],
    ['?pageSize=abc', 'pageSize'],
    ['?pageNumber=0', 'pageNumber'],
    ['?pageNumber=1.5', 'pageNumber'],
    ['?successful=maybe', 'successful'],
    ['?isOther=1x', 'isOther'],
    [`?search=${'x'.repeat(201)}`, 'search'],
    ['?unknownParam=1', 'unknownParam'],
  ])('rejects %s with 400 naming the parameter', async (query, parameter) => {
    const { status, body } = await listStatuses(query);
    expect(status).toBe(400);
    expect(body.success).toBe(false);
    expect(body.message).toContain(parameter);
  });
});

describe('admin authentication (spec 5.2)', () => {
  it('401 without a key and with an unknown key', async () => {
    const missing = await listStatuses('', { clientid: tenant.clientId, useremail: 'a@b.co' });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ success: false, message: expect.any(String) });
    const unknown = await listStatuses('', { ...tenant.adminHeaders, authorization: 'Bearer sk_test_nope_nope_nope_nope' });
    expect(unknown.status).toBe(401);
  });

  it('accepts the raw key as well as Bearer', async () => {
    const raw = await listStatuses('', { ...tenant.adminHeaders, authorization: tenant.apiKey });
    expect(raw.status).toBe(200);
  });

  it("403 when ClientId is another tenant's", async () => {
    const other = await createTestTenant(app);
    const { status, body } = await listStatuses('', { ...tenant.adminHeaders, clientid: other.clientId });
    expect(status).toBe(403);
    expect(body.message).toMatch(/ClientId/);
  });

  it('400 without UserEmail or ClientId', async () => {
    const { useremail: _u, ...noEmail } = tenant.adminHeaders;
    expect((await listStatuses('', noEmail)).status).toBe(400);
    const { clientid: _c, ...noClient } = tenant.adminHeaders;
    expect((await listStatuses('', noClient)).status).toBe(400);
    expect((await listStatuses('', { ...tenant.adminHeaders, useremail: 'not-an-email' })).status).toBe(400);
  });
});

describe('GraphQL statuses', () => {
  const query = `query($pageSize: Int, $pageNumber: Int, $search: String, $isIssuerDecline: Boolean) {
    statuses(pageSize: $pageSize, pageNumber: $pageNumber, search: $search, isIssuerDecline: $isIssuerDecline) {
      count totalCount pageNumber pageSize totalPages moreResults
      data { id status successful isGatewayLevelStatus isIssuerDecline isInsufficientFunds isInvalidCardDetails isOther }
    }
  }`;

  it('gives the same answers as the REST route', async () => {
    for (const variables of [{}, { pageSize: 20, pageNumber: 3 }, { search: 'declined' }, { isIssuerDecline: true, pageSize: 200 }]) {
      const rest = await listStatuses(`?${new URLSearchParams(Object.entries(variables).map(([k, v]): [string, string] => [k, String(v)]))}`);
      const gql = await graphql(query, variables);
      expect(gql.body.errors).toBeUndefined();
      const { success: _s, ...envelope } = rest.body;
      expect(gql.body.data.statuses).toEqual(envelope);
    }
  });

  it('rejects an out-of-range page size with BAD_USER_INPUT naming the field', async () => {
    const { body } = await graphql(query, { pageSize: 500 });
    expect(body.errors[0]).toMatchObject({ message: expect.stringContaining('pageSize'), extensions: { code: 'BAD_USER_INPUT', field: 'pageSize' } });
  });

  it('refuses anonymous callers and unknown keys', async () => {
    const anonymous = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ statuses { count } }' }),
    });
    expect(((await anonymous.json()) as any).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const unknown = await graphql('{ statuses { count } }', {}, 'Bearer sk_unknown_key_value_000000');
    expect(unknown.status).toBe(401);
    expect(unknown.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});
