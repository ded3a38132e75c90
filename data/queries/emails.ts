import type { EntityManager } from '@mikro-orm/postgresql';
import type { EmailMessage } from '../../domain/email/email-message.ts';
import type { DeliveryOutcome, EmailCursor, EmailEventRecord, EmailFilter, EmailRecord, QueuedEmail } from '../../domain/email/email-record.ts';
import type { EmailEventKind, EmailStatus } from '../../domain/email/email-status.ts';
import type { TemplateType } from '../../domain/email/email-request.schema.ts';

/** A PostgreSQL array literal of ids (a bare JS array would be expanded into a list of parameters). */
function uuidArray(ids: readonly string[]): string {
  if (!ids.every((id) => /^[0-9a-f-]{36}$/i.test(id))) throw new Error('Not a list of UUIDs');
  return `{${ids.join(',')}}`;
}

/** The tenant a `tenant_key` names and the domains it may send from (lower case). */
export async function findEmailSender(
  em: EntityManager,
  tenantKey: string,
): Promise<{ tenantId: number; senderDomains: readonly string[]; rateLimitPerMinute: number | null } | undefined> {
  const [row] = await em.execute<{ id: number; domains: string[]; rate_limit_per_minute: number | null }[]>(
    `select t.id, t.rate_limit_per_minute, coalesce(array_agg(lower(d.domain)) filter (where d.domain is not null), '{}') as domains
       from tenants t left join sender_domains d on d.tenant_id = t.id
      where t.email_tenant_key = ?::uuid group by t.id`,
    [tenantKey],
  );
  return row && { tenantId: row.id, senderDomains: row.domains, rateLimitPerMinute: row.rate_limit_per_minute };
}

export interface QueuedEmailRow {
  readonly id: string;
  readonly batchIndex: number | null;
  readonly message: EmailMessage;
}

/**
 * Stores accepted e-mails as `queued`, each with its first history entry, in one statement (a batch of 100 is
 * one round trip). Call inside the transaction that claims the request's idempotency key.
 */
export async function insertQueuedEmails(em: EntityManager, input: { tenantId: number; batchId: string | null; emails: readonly QueuedEmailRow[] }): Promise<void> {
  const rows = input.emails.map(({ id, batchIndex, message }) => ({
    id,
    batch_index: batchIndex,
    from_address: message.from,
    to_addresses: message.to,
    cc_addresses: message.cc,
    bcc_addresses: message.bcc,
    reply_to: message.replyTo,
    subject: message.subject,
    template_type: message.template.type,
    template_name: message.template.type === 'react' ? message.template.name : null,
    template_content: message.template.type === 'string' ? message.template.content : null,
    data: message.data,
  }));
  await em.execute(
    `with inserted as (
       insert into emails (id, tenant_id, batch_id, batch_index, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to, subject,
                           template_type, template_name, template_content, data, status, created_at, updated_at)
       select r.id, ?, ?, r.batch_index, r.from_address, r.to_addresses, r.cc_addresses, r.bcc_addresses, r.reply_to, r.subject,
              r.template_type, r.template_name, r.template_content, r.data, 'queued', now(), now()
         from jsonb_to_recordset(?::jsonb) as r(id uuid, batch_index int, from_address text, to_addresses jsonb, cc_addresses jsonb, bcc_addresses jsonb,
                                                reply_to text, subject text, template_type text, template_name text, template_content text, data jsonb)
       returning id)
     insert into email_events (email_id, kind, occurred_at) select id, 'queued', now() from inserted`,
    [input.tenantId, input.batchId, JSON.stringify(rows)],
  );
}

/**
 * Ends every e-mail of the list still queued, with the reason in its history: what the delivery workflow does when it
 * cannot go on, so no e-mail stays queued without a delivery. One some recipients already took (a deferral kept that)
 * ends `sent`, naming who did not get it, as a last attempt that gives up does; the others end `failed`. Returns how
 * many it failed.
 */
export async function endQueuedEmailsOfStoppedDelivery(em: EntityManager, emailIds: readonly string[], reason: string): Promise<number> {
  const rows = await em.execute<{ kind: 'sent' | 'failed' }[]>(
    `with ended as (
       update emails e set
         status = case when e.delivered_to_someone then 'sent' else 'failed' end,
         failure_reason = case when e.delivered_to_someone then left(n.not_delivered, 1000) else ? end,
         completed_at = now(),
         updated_at = now()
       from (select id, (select string_agg(line, ', ')
                           from (select value as line from jsonb_array_elements_text(undelivered_recipients)
                                 union all
                                 select value || ' (' || ? || ')' from jsonb_array_elements_text(coalesce(retry_recipients, to_addresses || cc_addresses || bcc_addresses))) lines) as not_delivered
               from emails where id = any(cast(? as uuid[]))) n
       where e.id = n.id and e.status = 'queued'
       returning e.id, e.status, e.failure_reason, e.smtp_message_id)
     insert into email_events (email_id, kind, detail, occurred_at)
       select id, status, case when status = 'sent' then left(coalesce(smtp_message_id || '; ', '') || 'not delivered to ' || failure_reason, 1000) else failure_reason end, now()
         from ended
       returning kind`,
    [reason, reason, uuidArray(emailIds)],
  );
  return rows.filter((row) => row.kind === 'failed').length;
}

interface QueuedEmailDbRow {
  id: string;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  reply_to: string | null;
  subject: string;
  template_type: TemplateType;
  template_name: string | null;
  template_content: string | null;
  data: Record<string, unknown>;
  retry_recipients: string[] | null;
  delivered_to_someone: boolean;
  undelivered_recipients: string[];
}

/** The e-mails of a delivery still waiting to be sent; sent and failed ones are never sent again. */
export async function loadQueuedEmails(em: EntityManager, emailIds: readonly string[]): Promise<QueuedEmail[]> {
  const rows = await em.execute<QueuedEmailDbRow[]>(
    `select id, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to, subject, template_type, template_name, template_content, data,
            retry_recipients, delivered_to_someone, undelivered_recipients
       from emails where id = any(cast(? as uuid[])) and status = 'queued'`,
    [uuidArray(emailIds)],
  );
  return rows.map((row) => ({
    id: row.id,
    from: row.from_address,
    to: row.to_addresses,
    cc: row.cc_addresses,
    bcc: row.bcc_addresses,
    replyTo: row.reply_to,
    subject: row.subject,
    templateType: row.template_type,
    templateName: row.template_name,
    templateContent: row.template_content,
    data: row.data,
    deferral: { retryRecipients: row.retry_recipients, deliveredToSomeone: row.delivered_to_someone, undeliveredRecipients: row.undelivered_recipients },
  }));
}

/**
 * Records one delivery attempt of several e-mails in one statement: each counts an attempt, gets a history entry,
 * and ends `sent` or `failed` (a `deferred` one stays `queued`, keeping who is left to try, whether someone had it
 * and who refused it for good, so an attempt retried after a lost worker sends to those left only). Only e-mails
 * still queued change: an outcome recorded twice (an activity retried after it wrote) is counted once.
 */
export async function recordDeliveryOutcomes(em: EntityManager, outcomes: readonly DeliveryOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const rows = outcomes.map((o) => {
    switch (o.kind) {
      case 'sent':
        // A partial delivery says in the history and the reason who did not get it.
        return {
          id: o.id,
          kind: o.kind,
          detail: o.undelivered ? `${o.messageId}; not delivered to ${o.undelivered}` : o.messageId,
          reason: o.undelivered ?? null,
          message_id: o.messageId,
          // Empty when the server's acceptance came on an earlier attempt (kept from then).
          response: o.response === '' ? null : o.response,
        };
      case 'deferred':
        return {
          id: o.id,
          kind: o.kind,
          detail: o.reason,
          reason: o.reason,
          message_id: o.messageId ?? null,
          response: o.response ?? null,
          retry_recipients: o.recipients ?? null,
          delivered: o.delivered ?? null,
          undelivered: o.undelivered ?? null,
        };
      case 'failed':
        return { id: o.id, kind: o.kind, detail: o.reason, reason: o.reason, message_id: null, response: null };
    }
  });
  await em.execute(
    `with o as (
       select * from jsonb_to_recordset(?::jsonb)
         as o(id uuid, kind text, detail text, reason text, message_id text, response text, retry_recipients jsonb, delivered boolean, undelivered jsonb)),
     updated as (
       update emails e set
         status = case when o.kind = 'deferred' then e.status else o.kind end,
         attempt_count = e.attempt_count + 1,
         smtp_message_id = coalesce(o.message_id, e.smtp_message_id),
         smtp_response = coalesce(o.response, e.smtp_response),
         failure_reason = o.reason,
         completed_at = case when o.kind = 'deferred' then null else now() end,
         retry_recipients = coalesce(o.retry_recipients, e.retry_recipients),
         delivered_to_someone = e.delivered_to_someone or coalesce(o.delivered, false),
         undelivered_recipients = coalesce(o.undelivered, e.undelivered_recipients),
         updated_at = now()
       from o where e.id = o.id and e.status = 'queued'
       returning e.id, o.kind, o.detail)
     insert into email_events (email_id, kind, detail, occurred_at) select id, kind, detail, now() from updated`,
    [JSON.stringify(rows)],
  );
}

interface EmailDbRow {
  id: string;
  batch_id: string | null;
  batch_index: number | null;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  reply_to: string | null;
  subject: string;
  template_type: TemplateType;
  template_name: string | null;
  status: EmailStatus;
  attempt_count: number;
  smtp_message_id: string | null;
  smtp_response: string | null;
  failure_reason: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  created_at_text: string;
}

const EMAIL_COLUMNS = `e.id, e.batch_id, e.batch_index, e.from_address, e.to_addresses, e.cc_addresses, e.bcc_addresses, e.reply_to, e.subject,
  e.template_type, e.template_name, e.status, e.attempt_count, e.smtp_message_id, e.smtp_response, e.failure_reason,
  e.created_at, e.updated_at, e.completed_at, e.created_at::text as created_at_text`;

const toRecord = (row: EmailDbRow): EmailRecord & { cursor: EmailCursor } => ({
  id: row.id,
  batchId: row.batch_id,
  batchIndex: row.batch_index,
  from: row.from_address,
  to: row.to_addresses,
  cc: row.cc_addresses,
  bcc: row.bcc_addresses,
  replyTo: row.reply_to,
  subject: row.subject,
  templateType: row.template_type,
  templateName: row.template_name,
  status: row.status,
  attemptCount: row.attempt_count,
  smtpMessageId: row.smtp_message_id,
  smtpResponse: row.smtp_response,
  failureReason: row.failure_reason,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
  completedAt: row.completed_at === null ? null : new Date(row.completed_at),
  cursor: { createdAt: row.created_at_text, id: row.id },
});

/** One e-mail of the tenant; another tenant's id reads as not found. */
export async function findEmail(em: EntityManager, tenantId: number, id: string): Promise<EmailRecord | undefined> {
  const [row] = await em.execute<EmailDbRow[]>(`select ${EMAIL_COLUMNS} from emails e where e.tenant_id = ? and e.id = ?`, [tenantId, id]);
  return row && toRecord(row);
}

/** A page of the tenant's e-mails, newest first; filters combine with AND, each served by an index. */
export async function listEmails(em: EntityManager, input: { tenantId: number; filter: EmailFilter; limit: number; after?: EmailCursor }): Promise<(EmailRecord & { cursor: EmailCursor })[]> {
  const conditions = ['e.tenant_id = ?'];
  const params: unknown[] = [input.tenantId];
  const { filter } = input;
  if (filter.status !== undefined) conditions.push('e.status = ?') && params.push(filter.status);
  if (filter.batchId !== undefined) conditions.push('e.batch_id = ?') && params.push(filter.batchId);
  if (filter.createdAfter !== undefined) conditions.push('e.created_at >= ?') && params.push(filter.createdAfter);
  if (filter.createdBefore !== undefined) conditions.push('e.created_at < ?') && params.push(filter.createdBefore);
  if (input.after) {
    conditions.push('(e.created_at, e.id) < (?::timestamptz, ?::uuid)');
    params.push(input.after.createdAt, input.after.id);
  }
  const rows = await em.execute<EmailDbRow[]>(
    `select ${EMAIL_COLUMNS} from emails e where ${conditions.join(' and ')} order by e.created_at desc, e.id desc limit ?`,
    [...params, input.limit],
  );
  return rows.map(toRecord);
}

/** The history of several e-mails (one look-up for a page), oldest entry first. */
export async function listEmailEvents(em: EntityManager, emailIds: readonly string[]): Promise<EmailEventRecord[]> {
  const rows = await em.execute<{ email_id: string; kind: EmailEventKind; detail: string | null; occurred_at: string }[]>(
    `select email_id, kind, detail, occurred_at from email_events where email_id = any(cast(? as uuid[])) order by email_id, id`,
    [uuidArray(emailIds)],
  );
  return rows.map((row) => ({ emailId: row.email_id, kind: row.kind, detail: row.detail, occurredAt: new Date(row.occurred_at) }));
}
