import { defineEntity, p } from '@mikro-orm/core';
import { Product } from './product.entity.ts';
import { Tenant } from './tenant.entity.ts';

export const BLOCKLIST_KINDS = ['email', 'card', 'bin', 'bin_country'] as const;
export type BlocklistKind = (typeof BLOCKLIST_KINDS)[number];

/**
 * A blocked e-mail, card (keyed fingerprint), BIN or BIN country. `tenant` null means a platform-level
 * block, answered `Failed`/`Blocked`; tenant blocks answer `UserBlocked`.
 */
const BlocklistEntrySchema = defineEntity({
  name: 'BlocklistEntry',
  tableName: 'blocklist_entries',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).nullable().deleteRule('cascade'),
    kind: p.enum(() => [...BLOCKLIST_KINDS]),
    value: p.string().length(320),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ['tenant', 'kind', 'value'] }],
  indexes: [{ properties: ['kind', 'value'] }],
});
export class BlocklistEntry extends BlocklistEntrySchema.class {}
BlocklistEntrySchema.setClass(BlocklistEntry);

/** Every submit that passed validation, for velocity limits (same card, same e-mail per product). */
const SubmitAttemptSchema = defineEntity({
  name: 'SubmitAttempt',
  tableName: 'submit_attempts',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    product: () => p.manyToOne(Product).deleteRule('cascade'),
    cardFingerprint: p.string().length(64),
    email: p.string().length(320),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['tenant', 'cardFingerprint', 'createdAt'] }, { properties: ['product', 'email', 'createdAt'] }, { properties: ['createdAt'] }],
});
export class SubmitAttempt extends SubmitAttemptSchema.class {}
SubmitAttemptSchema.setClass(SubmitAttempt);

/** An `Idempotency-Key` of a submit: the first request's body hash and the submit it started. */
const IdempotencyKeySchema = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    tenant: () => p.manyToOne(Tenant).primary().deleteRule('cascade'),
    key: p.string().length(255).primary(),
    requestHash: p.string().length(64),
    submitOrderId: p.integer(),
    /** A pre-processing outcome (no workflow was started) to replay as is. */
    result: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['createdAt'] }],
});
export class IdempotencyKey extends IdempotencyKeySchema.class {}
IdempotencyKeySchema.setClass(IdempotencyKey);

/**
 * An `Idempotency-Key` of an action on an existing payment or subscription (capture, void, cancel, pause, resume): the
 * action and resource it names, and that action's first answer for its repeats (null while it runs).
 */
const ActionIdempotencyKeySchema = defineEntity({
  name: 'ActionIdempotencyKey',
  tableName: 'action_idempotency_keys',
  properties: {
    tenant: () => p.manyToOne(Tenant).primary().deleteRule('cascade'),
    key: p.string().length(255).primary(),
    action: p.text(),
    target: p.text(),
    /** The request holding the key: only it stores the answer or gives the key back (a takeover makes a new claim). */
    claim: p.uuid(),
    answer: p.json<unknown>().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ properties: ['createdAt'] }],
});
export class ActionIdempotencyKey extends ActionIdempotencyKeySchema.class {}
ActionIdempotencyKeySchema.setClass(ActionIdempotencyKey);
