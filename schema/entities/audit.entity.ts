import { defineEntity, p } from '@mikro-orm/core';
import { Tenant } from './tenant.entity.ts';

/** Who changed what: every admin change records the caller's `UserEmail` (spec 5.2), operators their role. */
const AuditEntrySchema = defineEntity({
  name: 'AuditEntry',
  tableName: 'audit_entries',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).nullable().deleteRule('set null'),
    actor: p.string().length(320),
    action: p.string().length(100),
    entityType: p.string().length(100),
    entityId: p.string().length(100),
    changes: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['tenant', 'createdAt'] }, { name: 'audit_entries_entity_index', properties: ['entityType', 'entityId', 'createdAt'] }],
});
export class AuditEntry extends AuditEntrySchema.class {}
AuditEntrySchema.setClass(AuditEntry);

/**
 * Fixed-window request counters shared by every gateway process (the rate limit must hold across
 * several processes, so it lives in PostgreSQL, updated with one atomic upsert per request).
 */
const RateLimitWindowSchema = defineEntity({
  name: 'RateLimitWindow',
  tableName: 'rate_limit_windows',
  properties: {
    subject: p.string().length(100).primary(),
    windowStart: p.datetime().primary(),
    requestCount: p.integer(),
  },
});
export class RateLimitWindow extends RateLimitWindowSchema.class {}
RateLimitWindowSchema.setClass(RateLimitWindow);
