import { defineEntity, p } from '@mikro-orm/core';
import { EMAIL_EVENT_KINDS, EMAIL_STATUSES } from '../../domain/email/email-status.ts';
import { TEMPLATE_TYPES } from '../../domain/email/email-request.schema.ts';
import { Tenant } from './tenant.entity.ts';

/** A tenant's e-mails are read newest first, all of them or by status; each has an index ending that way. */
const byCreated = (name: string, columns: string) =>
  ({ name, expression: `create index "${name}" on "emails" ("tenant_id", ${columns}"created_at" desc, "id" desc)` }) as const;

/**
 * One accepted e-mail (spec 2.5): the request as checked (addresses as written, template and data; rendered
 * when sent) and where its delivery is. Written and read through `data/queries/emails.ts`.
 */
const EmailSchema = defineEntity({
  name: 'Email',
  tableName: 'emails',
  properties: {
    id: p.uuid().primary(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    /** The delivery (batch request) it was accepted with; null for a single send. */
    batchId: p.uuid().nullable(),
    batchIndex: p.integer().nullable(),
    fromAddress: p.string().length(320),
    toAddresses: p.json<string[]>(),
    ccAddresses: p.json<string[]>().default('[]'),
    bccAddresses: p.json<string[]>().default('[]'),
    replyTo: p.string().length(320).nullable(),
    subject: p.string().length(998),
    templateType: p.enum(() => [...TEMPLATE_TYPES]),
    templateName: p.string().length(64).nullable(),
    templateContent: p.text().nullable(),
    data: p.json<Record<string, unknown>>().default('{}'),
    status: p.enum(() => [...EMAIL_STATUSES]).default('queued'),
    attemptCount: p.integer().default(0),
    smtpMessageId: p.string().length(998).nullable(),
    smtpResponse: p.text().nullable(),
    failureReason: p.text().nullable(),
    /** Still queued after a deferral: the recipients left to try (null: all of them). */
    retryRecipients: p.json<string[]>().nullable(),
    /** Some recipient's server took it on an earlier attempt (then giving up on the rest still leaves it `sent`). */
    deliveredToSomeone: p.boolean().default(false),
    /** Recipients refused for good on earlier attempts (`address (reply)`), named when it is finally recorded. */
    undeliveredRecipients: p.json<string[]>().default('[]'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
  indexes: [
    byCreated('emails_tenant_created_index', ''),
    byCreated('emails_tenant_status_created_index', '"status", '),
    { name: 'emails_batch_id_index', properties: ['batchId'] },
  ],
});
export class Email extends EmailSchema.class {}
EmailSchema.setClass(Email);

/** One entry of an e-mail's history; `detail` holds the SMTP message id (sent) or the server's reason. */
const EmailEventSchema = defineEntity({
  name: 'EmailEvent',
  tableName: 'email_events',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    email: () => p.manyToOne(Email).deleteRule('cascade'),
    kind: p.enum(() => [...EMAIL_EVENT_KINDS]),
    detail: p.text().nullable(),
    occurredAt: p.datetime(),
  },
  indexes: [{ properties: ['email', 'id'] }],
});
export class EmailEvent extends EmailEventSchema.class {}
EmailEventSchema.setClass(EmailEvent);

/**
 * An e-mail request's idempotency key (given, or derived from the content), kept 7 days: the primary key lets
 * exactly one of several concurrent requests claim it; the others replay its `response` or wait for it.
 */
const EmailIdempotencyKeySchema = defineEntity({
  name: 'EmailIdempotencyKey',
  tableName: 'email_idempotency_keys',
  properties: {
    tenant: () => p.manyToOne(Tenant).primary().deleteRule('cascade'),
    key: p.string().length(300).primary(),
    requestHash: p.string().length(64),
    deliveryId: p.uuid(),
    emailIds: p.json<string[]>(),
    response: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime(),
  },
  indexes: [{ properties: ['createdAt'] }],
});
export class EmailIdempotencyKey extends EmailIdempotencyKeySchema.class {}
EmailIdempotencyKeySchema.setClass(EmailIdempotencyKey);
