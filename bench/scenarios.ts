/** One benchmarked request shape, run at each concurrency. */
export interface Scenario {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly concurrency: readonly number[];
}

export function scenarios(adminHeaders: Record<string, string>): Scenario[] {
  return [
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
