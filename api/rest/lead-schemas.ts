import { Type } from '@sinclair/typebox';
import { LEAD_LIMITS, LEAD_STATUSES } from '../../domain/leads/lead.ts';
import { LEAD_PAGE_SIZE } from '../../domain/leads/lead-query.ts';
import { ref, stringEnum } from '../http/schemas.ts';
import { LEAD_ERROR_STATUS, type LeadErrorCode } from './lead-errors.ts';

/**
 * What the OpenAPI document says about the lead API. These schemas document; the domain parsers
 * (`parseLeadWrite`, `parseLeadQuery`) validate, because the lead API answers every bad field at once in its
 * own envelope (`details`), which a schema validator's first error cannot give.
 */

export const LeadWriteBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: LEAD_LIMITS.email, description: 'As the customer typed it; not white space alone' }),
    session_id: Type.String({ minLength: 1, maxLength: LEAD_LIMITS.sessionId, description: 'The checkout session; pass it as `partnerSession` at submit. Not white space alone' }),
    first_name: Type.Optional(Type.String({ maxLength: LEAD_LIMITS.name })),
    last_name: Type.Optional(Type.String({ maxLength: LEAD_LIMITS.name })),
    phone: Type.Optional(Type.String({ maxLength: LEAD_LIMITS.phone })),
    scans: Type.Optional(
      Type.Array(Type.Object({ page: Type.String({ maxLength: LEAD_LIMITS.scanPage }) }, { additionalProperties: true }), { maxItems: LEAD_LIMITS.scans }),
    ),
    pending_data_b64: Type.Optional(Type.String({ contentEncoding: 'base64', description: 'Standard base64 of a JSON object (at most 32 KiB decoded), stored as `pending_data`' })),
  },
  {
    $id: 'CustomerLeadWrite',
    // CFA and D2D fields are open-ended names; described in words rather than as patternProperties, which typed
    // clients turn into an index signature every other field must match.
    additionalProperties: true,
    description:
      'A lead write, plus any CFA and D2D fields: names `cfa_<x>` or `d2d_<x>` (`<x>` 1–60 of a-z, 0-9, _), string values of at most 1000 characters, at most 50. Gateway-owned fields (`tenant_id`, `status`, payment identifiers) and other names are refused by name.',
    examples: [{ email: 'buyer@example.com', session_id: 'sess_3f2a9c', first_name: 'Ada', scans: [{ page: '/checkout' }], cfa_device: 'mobile' }],
  },
);

const nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const CustomerLead = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    session_id: Type.String(),
    email: Type.String(),
    first_name: nullable(Type.String()),
    last_name: nullable(Type.String()),
    phone: nullable(Type.String()),
    scans: Type.Array(Type.Object({ page: Type.String() }, { additionalProperties: true })),
    pending_data: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    cfa_device: nullable(Type.String({ description: 'The device field spec 2.4 names: always answered, null until written' })),
    status: stringEnum(LEAD_STATUSES),
    application_id: Type.Integer(),
    environment: stringEnum(['test', 'live'] as const),
    transaction_id: nullable(Type.String()),
    order_id: Type.Union([Type.Integer(), Type.Null()]),
    amount: nullable(Type.String({ description: 'Exact decimal of the first payment' })),
    currency: nullable(Type.String()),
    subscription_id: Type.Union([Type.Integer(), Type.Null()]),
    paid_at: nullable(Type.String({ format: 'date-time' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'CustomerLead',
    additionalProperties: true,
    description: 'A stored lead, complete: every CFA and D2D field (`cfa_*`, `d2d_*`, strings) at the top level beside these; never the tenant',
  },
);

export const LeadWriteAnswer = Type.Object({
  ok: Type.Literal(true),
  data: Type.Object({
    id: Type.String({ format: 'uuid' }),
    session_id: Type.String(),
    status: stringEnum(LEAD_STATUSES),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  }),
});

export const LeadListAnswer = Type.Object({ ok: Type.Literal(true), data: Type.Array(ref(CustomerLead)) });

export const LeadQuerystring = Type.Object(
  {
    id: Type.Optional(Type.String({ format: 'uuid' })),
    email: Type.Optional(Type.String({ maxLength: LEAD_LIMITS.email })),
    session_id: Type.Optional(Type.String({ maxLength: LEAD_LIMITS.sessionId })),
    transaction_id: Type.Optional(Type.String({ maxLength: 100 })),
    subscription_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'A subscription id (a positive 32-bit integer)' })),
    status: Type.Optional(stringEnum(LEAD_STATUSES)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LEAD_PAGE_SIZE.max, description: `Default ${LEAD_PAGE_SIZE.default}` })),
  },
  { additionalProperties: false },
);

export const LeadErrorAnswer = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.Object({
      code: stringEnum(Object.keys(LEAD_ERROR_STATUS) as LeadErrorCode[]),
      message: Type.String(),
      details: Type.Array(Type.String(), { description: 'One entry per bad field: `name: problem`' }),
    }),
  },
  { $id: 'CustomerLeadError', examples: [{ ok: false, error: { code: 'validation_failed', message: 'The request has invalid fields', details: ['email: is required'] } }] },
);

const LEAD_ERROR_DESCRIPTIONS = {
  400: 'invalid_json: the body is not JSON; or validation_failed: a bad query parameter',
  401: 'unauthorized: no key, or an unknown one',
  403: 'forbidden: the Origin is not allowed for the publishable key, or a publishable key tried to read',
  422: 'validation_failed: one detail per bad field',
  429: 'rate_limited: see Retry-After',
  500: 'internal_error',
  503: 'unavailable: the database or the workflow engine is away; retry after Retry-After (a write may have been kept: the same session_id updates it)',
} as const;

export function leadErrorResponses<S extends keyof typeof LEAD_ERROR_DESCRIPTIONS>(...statuses: S[]) {
  return Object.fromEntries(statuses.map((status) => [status, ref(LeadErrorAnswer, { description: LEAD_ERROR_DESCRIPTIONS[status] })]));
}
