import { Type, type Static } from '@sinclair/typebox';
import { DESCRIPTOR_CONTAINS_MIN, MITIGATION_LIMITS, UUID_PATTERN } from '../../domain/mitigation/search.ts';
import { SEARCH_YEARS } from '../../domain/validation/timestamps.ts';

const list = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number>>(item: T, description: string) =>
  Type.Optional(Type.Array(item, { minItems: 1, maxItems: MITIGATION_LIMITS.maxValuesPerFilter, description: `${description}; any of the values matches` }));
const ids = (description: string) => list(Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), description);
const day = (description: string) => Type.Optional(Type.String({ format: 'date', description: `${description}; years ${SEARCH_YEARS.min} to ${SEARCH_YEARS.max}` }));

/** Body of `POST /api/mitigation/transactions` (spec 4.10): every filter optional, all combined with AND. */
export const MitigationSearchInput = Type.Object(
  {
    pageNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: MITIGATION_LIMITS.maxPageNumber, description: '1-based page (default 1)' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MITIGATION_LIMITS.maxLimit, description: `Records per page (default ${MITIGATION_LIMITS.defaultLimit})` })),
    emails: list(Type.String({ minLength: 1, maxLength: 320 }), 'Customer e-mails (case-insensitive)'),
    orderIds: ids("Order ids; a plan's `orderId` (its subscription's order) also finds the checkout's charge"),
    // A pattern, not `format: uuid`: the format also takes a `urn:uuid:` prefix, which the database's uuid cast refuses.
    transactionIds: list(Type.String({ pattern: UUID_PATTERN }), 'Transaction UUIDs (8-4-4-4-12 hex digits)'),
    gatewayTransactionIds: list(Type.String({ minLength: 1, maxLength: 100 }), 'Processor transaction ids'),
    bin: Type.Optional(Type.String({ pattern: '^\\d{6}$', description: 'First 6 digits of the card' })),
    last4: Type.Optional(Type.String({ pattern: '^\\d{4}$', description: 'Last 4 digits of the card' })),
    firstName: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Exact, case-insensitive' })),
    lastName: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Exact, case-insensitive' })),
    authCodes: list(Type.String({ minLength: 1, maxLength: 20 }), 'Authorization codes'),
    currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code' })),
    dateFrom: day('First day (UTC) of authorization, inclusive'),
    dateTo: day('Last day (UTC) of authorization, inclusive'),
    descriptorContains: Type.Optional(Type.String({ minLength: DESCRIPTOR_CONTAINS_MIN, maxLength: 255, description: `Case-insensitive substring of the descriptor, at least ${DESCRIPTOR_CONTAINS_MIN} characters` })),
    sandbox: Type.Optional(Type.Boolean({ description: 'true: sandbox transactions only; false: live only; omitted: both' })),
    applicationIds: ids('Application ids'),
    productIds: ids('Product ids'),
    campaignIds: ids('Campaign ids'),
    merchantAccountIds: ids('Merchant account ids'),
    companyIds: ids('Company ids (the tenant or its child companies)'),
    subscriptionIds: ids('Subscription ids'),
    amounts: list(Type.Number({ minimum: 0, maximum: 999_999_999_999.99 }), 'Exact amounts (at most 2 decimals)'),
    includeUpdated: Type.Optional(Type.Boolean({ description: 'Also transactions captured in the period though authorized earlier (refunds are their own transactions)' })),
  },
  { additionalProperties: false },
);
export type MitigationSearchInput = Static<typeof MitigationSearchInput>;
