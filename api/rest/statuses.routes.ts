import { Type } from '@sinclair/typebox';
import { listStatuses } from '../../data/queries/status-codes.ts';
import { parseStatusListQuery, STATUS_PAGE_SIZE, STATUS_SEARCH_MAX_LENGTH } from '../../domain/statuses/status-query.ts';
import { defineRoute } from '../http/route.ts';
import { AdminHeaders, adminErrorResponses } from '../http/schemas.ts';

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

export const StatusRecordSchema = Type.Object(
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
  { $id: 'StatusRecord' },
);

const StatusListResponse = Type.Object({
  success: Type.Literal(true),
  count: Type.Integer(),
  totalCount: Type.Integer(),
  pageNumber: Type.Integer(),
  pageSize: Type.Integer(),
  totalPages: Type.Integer(),
  moreResults: Type.Boolean(),
  data: Type.Array(StatusRecordSchema),
});

export const statusRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/admin/statuses',
    operationId: 'listStatuses',
    summary: 'Paginated list of transaction status codes (spec 4.9); filters combine with AND',
    tags: ['admin'],
    auth: 'admin',
    schema: { querystring: StatusListQuerystring, headers: AdminHeaders, response: { 200: StatusListResponse, ...adminErrorResponses } },
    async handler(request) {
      const page = await listStatuses(request.em, parseStatusListQuery(request.query as Record<string, unknown>));
      return { success: true, ...page };
    },
  }),
];
