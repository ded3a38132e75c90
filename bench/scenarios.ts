/** One benchmarked request shape, run at each concurrency. */
export interface Scenario {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly concurrency: readonly number[];
}

/** Sandbox test cards (see README): approved, and 3-D Secure challenge. */
export const APPROVED_CARD = '4242424242424242';
export const THREE_DS_CARD = '4000000000003220';

export function benchSubmitBody(pan: string) {
  return {
    card: { name: 'Bench', pan, expiryMonth: 12, expiryYear: new Date().getFullYear() + 2, cvv: '123' },
    email: 'bench@example.com',
    partnerSession: 'bench-session',
  };
}

export function scenarios(adminHeaders: Record<string, string>, productId: number): Scenario[] {
  return [
    {
      name: 'REST POST /api/{productId} approved submit',
      method: 'POST',
      path: `/api/${productId}`,
      headers: { authorization: adminHeaders.authorization!, 'content-type': 'application/json' },
      body: JSON.stringify(benchSubmitBody(APPROVED_CARD)),
      concurrency: [1, 16, 64],
    },
    {
      name: 'REST GET /api/admin/statuses (page of 50)',
      method: 'GET',
      path: '/api/admin/statuses',
      headers: adminHeaders,
      concurrency: [1, 32],
    },
    {
      name: 'REST GET /api/admin/statuses?search=declined&isIssuerDecline=true',
      method: 'GET',
      path: '/api/admin/statuses?search=declined&isIssuerDecline=true',
      headers: adminHeaders,
      concurrency: [1, 32],
    },
    {
      name: 'GraphQL statuses (page of 50)',
      method: 'POST',
      path: '/graphql',
      headers: { authorization: adminHeaders.authorization!, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ statuses { count totalCount moreResults data { id status successful isOther } } }' }),
      concurrency: [1, 32],
    },
  ];
}
