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
});
export class StatusCode extends StatusCodeSchema.class {}
StatusCodeSchema.setClass(StatusCode);
