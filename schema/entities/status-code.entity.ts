import { defineEntity, p } from '@mikro-orm/core';

/** One transaction status code of spec 7.5, seeded by a migration from schema/reference/status-codes.ts. */
const StatusCodeSchema = defineEntity({
  name: 'StatusCode',
  tableName: 'status_codes',
  properties: {
    id: p.integer().primary().autoincrement(false),
    status: p.string().length(200),
    successful: p.boolean(),
    isGatewayLevelStatus: p.boolean(),
    isIssuerDecline: p.boolean(),
    isInsufficientFunds: p.boolean(),
    isInvalidCardDetails: p.boolean(),
    isOther: p.boolean(),
  },
  // Case-insensitive search on the description (the status list `search` parameter).
  indexes: [{ name: 'status_codes_status_lower_index', expression: 'create index "status_codes_status_lower_index" on "status_codes" (lower("status"))' }],
});
export class StatusCode extends StatusCodeSchema.class {}
StatusCodeSchema.setClass(StatusCode);
