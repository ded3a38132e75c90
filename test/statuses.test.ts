import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_STATUS_CODES, asStatusRecord } from './support/spec-status-codes.ts';
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

/** The spec 7.5 codes (independent copy, test/fixtures/) as the status list answers them: ordered by id. */
const SPEC_BY_ID = [...SPEC_STATUS_CODES].sort((a, b) => a.id - b.id);
const TOTAL = SPEC_STATUS_CODES.length;
const idsWhere = (keep: (code: (typeof SPEC_STATUS_CODES)[number]) => boolean) => SPEC_BY_ID.filter(keep).map((c) => String(c.id));

describe('status-code reference table', () => {
  it('holds exactly the codes of spec 7.5, code by code', async () => {
    const rows = await app.orm.em.fork().execute<Record<string, any>[]>('select * from status_codes order by id');
    expect(rows).toHaveLength(TOTAL);
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const code of SPEC_STATUS_CODES) {
      const row = byId.get(code.id);
      expect(row, `code ${code.id} missing`).toBeDefined();
      expect(
        {
          id: row!.id,
          status: row!.status,
          successful: row!.successful,
          isGatewayLevelStatus: row!.is_gateway_level_status,
          isIssuerDecline: row!.is_issuer_decline,
          isInsufficientFunds: row!.is_insufficient_funds,
          isInvalidCardDetails: row!.is_invalid_card_details,
          isOther: row!.is_other,
        },
        `code ${code.id}`,
      ).toEqual(code);
    }
  });
});

describe('GET /api/admin/statuses', () => {
  it('answers every code of spec 7.5 with its description and group flags, in id order', async () => {
    const pages: Record<string, unknown>[] = [];
    for (let pageNumber = 1; pageNumber <= 2; pageNumber++) {
      const { status, body } = await listStatuses(`?pageSize=200&pageNumber=${pageNumber}`);
      expect(status).toBe(200);
      pages.push(...body.data);
    }
    expect(pages).toEqual(SPEC_BY_ID.map(asStatusRecord));
  });

  it('returns the first page of 50 with the spec 4.9 envelope', async () => {
    const { status, body } = await listStatuses();
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, count: 50, totalCount: TOTAL, pageNumber: 1, pageSize: 50, totalPages: Math.ceil(TOTAL / 50), moreResults: true });
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
    expect(body.data).toEqual(SPEC_BY_ID.slice(0, 50).map(asStatusRecord));
  });

  it('pages to the last page and past it', async () => {
    // 251 codes: six full pages of 40 and 11 on the seventh.
    const { body } = await listStatuses('?pageSize=40&pageNumber=7');
    expect(body).toMatchObject({ pageNumber: 7, pageSize: 40, count: 11, totalCount: 251, totalPages: 7, moreResults: false });
    expect(body.data).toEqual(SPEC_BY_ID.slice(240).map(asStatusRecord));
    const beyond = await listStatuses('?pageSize=40&pageNumber=8');
    expect(beyond.body).toMatchObject({ count: 0, totalCount: 251, moreResults: false, data: [] });
  });

  it('filters by group flags, combining them with AND', async () => {
    const successful = await listStatuses('?successful=true&pageSize=200');
    expect(successful.body.data.map((s: { id: string }) => s.id)).toEqual(['2636', '3367', '3616', '4165', '4173', '4257']);
    const funds = await listStatuses('?isInsufficientFunds=true');
    expect(funds.body.data.map((s: { id: string }) => s.id)).toEqual(['2687', '3512', '3619', '3620', '4203', '4242', '4281']);
    const invalidCard = await listStatuses('?isInvalidCardDetails=true&pageSize=200');
    expect(invalidCard.body.data.map((s: { id: string }) => s.id)).toEqual(idsWhere((c) => c.isInvalidCardDetails));
    const none = await listStatuses('?successful=true&isOther=true');
    expect(none.body.totalCount).toBe(0);
    const notOther = await listStatuses('?isOther=false&pageSize=200');
    expect(notOther.body.data.map((s: { id: string }) => s.id)).toEqual(idsWhere((c) => !c.isOther));
    expect(notOther.body.totalCount).toBe(151);
    const other = await listStatuses('?isOther=true&pageSize=200');
    expect(other.body.data.map((s: { id: string }) => s.id)).toEqual(idsWhere((c) => c.isOther));
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
    // Numbers only as digits: ajv's coercion alone would read these as 10, 16, 5 and 10.
    ['?pageNumber=1e1', 'pageNumber must be integer'],
    ['?pageSize=0x10', 'pageSize must be integer'],
    ['?pageNumber=%205', 'pageNumber must be integer'],
    ['?pageSize=%2B10', 'pageSize must be integer'],
    ['?successful=maybe', 'successful'],
    ['?isOther=1x', 'isOther'],
    [`?search=${'x'.repeat(201)}`, 'search'],
    ['?unknownParam=1', 'unknownParam'],
    // Too large is said so, not "must be at least 1".
    ['?pageNumber=99999999999999999999', 'pageNumber must be between 1 and'],
    ['?pageSize=10&pageSize=20', 'pageSize is given more than once'],
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
