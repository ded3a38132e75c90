import { Type } from '@sinclair/typebox';
import { listStatuses } from '../../data/queries/status-codes.ts';
import { parseStatusListQuery, STATUS_PAGE_SIZE, STATUS_SEARCH_MAX_LENGTH } from '../../domain/statuses/status-query.ts';
import { adminCallerOf } from '../http/authentication.ts';
import { AdminHeaders, errorResponses, ref } from '../http/schemas.ts';
import { API_KEY_REQUIRED } from '../http/security.ts';
import type { TypedApp } from '../http/typed-app.ts';

const flag = (description: string) => Type.Optional(Type.Boolean({ description }));

export const StatusListQuerystring = Type.Object(
  {
    pageNumber: Type.Optional(Type.Integer({ minimum: 1, description: '1-based page number (default 1)' })),
    pageSize: Type.Optional(Type.Integer({ minimum: STATUS_PAGE_SIZE.min, maximum: STATUS_PAGE_SIZE.max, description: 'Items per page (default 50)' })),
    search: Type.Optional(Type.String({ maxLength: STATUS_SEARCH_MAX_LENGTH, description: 'Case-insensitive match on the description or the id' })),
    successful: flag('Only codes whose `successful` flag equals this'),
    isIssuerDecline: flag('Only codes whose issuer-decline flag equals this'),
    isInsufficientFunds: flag('Only codes whose insufficient-funds flag equals this'),
    isInvalidCardDetails: flag('Only codes whose invalid-card-details flag equals this'),
    isOther: flag('Only codes whose other flag equals this'),
  },
  { additionalProperties: false },
);

export const StatusRecord = Type.Object(
  {
    id: Type.String(),
    status: Type.String(),
    successful: Type.Boolean(),
    isGatewayLevelStatus: Type.Boolean(),
    isIssuerDecline: Type.Boolean(),
    isInsufficientFunds: Type.Boolean(),
    isInvalidCardDetails: Type.Boolean(),
    isOther: Type.Boolean(),
  },
  {
    $id: 'StatusRecord',
    examples: [
      { id: '3617', status: 'Declined', successful: false, isGatewayLevelStatus: false, isIssuerDecline: true, isInsufficientFunds: false, isInvalidCardDetails: false, isOther: false },
    ],
  },
);

const StatusListResponse = Type.Object(
  {
    success: Type.Literal(true),
    count: Type.Integer(),
    totalCount: Type.Integer(),
    pageNumber: Type.Integer(),
    pageSize: Type.Integer(),
    totalPages: Type.Integer(),
    moreResults: Type.Boolean(),
    data: Type.Array(ref(StatusRecord)),
  },
  { description: 'One page of status codes' },
);

export function statusRoutes(app: TypedApp): void {
  app.addSchema(StatusRecord);
  app.get('/api/admin/statuses', {
    schema: {
      operationId: 'listStatuses',
      summary: 'Paginated list of transaction status codes (spec 4.9); filters combine with AND',
      tags: ['admin'],
      security: API_KEY_REQUIRED,
      querystring: StatusListQuerystring,
      headers: AdminHeaders,
      response: { 200: StatusListResponse, ...errorResponses(400, 401, 403, 429, 500) },
    },
    async handler(request) {
      adminCallerOf(request); // the reference is the same for every tenant, but only an admin caller reads it
      const page = await listStatuses(request.em, parseStatusListQuery(request.query));
      return { success: true as const, ...page };
    },
  });
}
