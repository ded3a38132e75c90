import { setTimeout as delay } from 'node:timers/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import { endQueuedEmailsOfStoppedDelivery, loadQueuedEmails, recordDeliveryOutcomes } from '../../data/queries/emails.ts';
import type { DeliveryOutcome, PendingEmail, QueuedEmail } from '../../domain/email/email-record.ts';
import type { Logger } from '../../domain/logger.ts';
import { parseAddress } from '../../domain/email/addresses.ts';
import { deliveredBefore, whatIsLeft } from '../../domain/email/deferral.ts';
import type { EmailTemplate } from '../../domain/email/email-message.ts';
import { NotSentInTime, type MailAddress, type Mailer, type MailerReceipt, type RecipientRefusal } from '../../domain/email/mailer.ts';
import type { EmailRenderer } from '../../domain/email/render-email.ts';
import { classifySmtpFailure } from '../../domain/email/smtp-outcome.ts';
import { isReactTemplateName } from '../../domain/email/templates/react-templates.ts';
import { permanentFailureOf, withPermanentFailures } from '../shared/permanent-failures.ts';
import { attemptDeadlineMs } from '../shared/run-given-up.ts';
import { writeInGroups } from '../shared/write-in-groups.ts';

export interface EmailActivityDeps {
  readonly orm: MikroORM;
  readonly logger: Logger;
  readonly mailer: Mailer;
  readonly renderEmail: EmailRenderer;
}

export interface DeliverEmailsResult {
  readonly sent: number;
  readonly failed: number;
  /** E-mails a temporary SMTP failure kept queued (for some recipients, or all): the workflow tries them again later. */
  readonly deferred: readonly PendingEmail[];
}

/** The stored template of an e-mail, as the renderer takes it. */
function templateOf(email: QueuedEmail): EmailTemplate {
  if (email.templateType === 'string') return { type: 'string', content: email.templateContent ?? '' };
  if (!email.templateName || !isReactTemplateName(email.templateName)) throw new Error(`unknown template ${email.templateName}`);
  return { type: 'react', name: email.templateName };
}

/** `<emailId@senderdomain>`: the same on every attempt, so a resend after an uncertain attempt is recognisable. */
function messageIdOf(email: QueuedEmail, from: MailAddress): string {
  return `<${email.id}@${from.address.slice(from.address.lastIndexOf('@') + 1).toLowerCase()}>`;
}

/** The stored (canonical) addresses parsed again into name and address; undefined when one is not an address. */
function mailboxes(written: readonly string[]): MailAddress[] | undefined {
  const parsed = written.map((w) => parseAddress(w));
  if (parsed.some((p) => typeof p === 'string')) return undefined;
  return parsed.map((p) => ({ name: (p as Exclude<typeof p, string>).name, address: (p as Exclude<typeof p, string>).address }));
}

/**
 * Recording sent outcomes: tried again from half a second, doubling to 15 s, until 20 s before the attempt's time
 * limit (a statement may take that long to fail); outside an activity, for 3 minutes.
 */
const RECORD_FIRST_WAIT_MS = 500;
const RECORD_LONGEST_WAIT_MS = 15_000;
const RECORD_MARGIN_MS = 20_000;
/**
 * A message is handed to SMTP only while this much of the attempt is left beyond the recording's margin (an SMTP
 * exchange is bounded by the socket's 30 s idle timeout per step): one whose turn comes later is left for the next
 * attempt, which can never start while this one still sends.
 */
const SEND_ALLOWANCE_MS = 60_000;
const RECORD_OUTSIDE_ACTIVITY_MS = 3 * 60_000;

const describeRefusals = (refusals: readonly RecipientRefusal[]) => refusals.map((r) => `${r.address} (${r.reason})`).join(', ').slice(0, 1000);

export function createEmailDeliveryActivities(deps: EmailActivityDeps) {
  /**
   * What the server's per-recipient answer means: refusals with a 5xx reply are final for that recipient, the
   * others (4xx, no code) are tried again on the schedule, only them, unless this was the last attempt.
   */
  function outcomeOfReceipt(email: PendingEmail, receipt: MailerReceipt, lastAttempt: boolean): DeliveryOutcome {
    const refusedForGood = receipt.rejected.filter((r) => r.responseCode !== undefined && r.responseCode >= 500);
    const deferred = receipt.rejected.filter((r) => !refusedForGood.includes(r));
    // Delivered to someone now, or on an earlier attempt. (A recipient deferred on every attempt is no one reached.)
    const deliveredToSomeone = receipt.accepted.length > 0 || deliveredBefore(email);
    const undelivered = [...(email.undelivered ?? []), ...refusedForGood.map((r) => `${r.address} (${r.reason})`)];
    if (deferred.length > 0 && !lastAttempt) {
      const reason = `Deferred for ${describeRefusals(deferred)}${refusedForGood.length > 0 ? `; refused for ${describeRefusals(refusedForGood)}` : ''}`;
      return {
        id: email.id,
        kind: 'deferred',
        reason: reason.slice(0, 1000),
        recipients: deferred.map((r) => r.address),
        delivered: deliveredToSomeone,
        ...(undelivered.length > 0 ? { undelivered } : {}),
        ...(receipt.accepted.length > 0 ? { messageId: receipt.messageId, response: receipt.response.slice(0, 1000) } : {}),
      };
    }
    const notDelivered = [...undelivered, ...deferred.map((r) => `${r.address} (gave up after the last attempt: ${r.reason})`)].join(', ').slice(0, 1000);
    if (!deliveredToSomeone) return { id: email.id, kind: 'failed', reason: `Every recipient was refused: ${notDelivered}`.slice(0, 1000) };
    return { id: email.id, kind: 'sent', messageId: receipt.messageId, response: receipt.response.slice(0, 1000), ...(notDelivered ? { undelivered: notDelivered } : {}) };
  }

  async function attempt(email: QueuedEmail, pending: PendingEmail, lastAttempt: boolean): Promise<DeliveryOutcome> {
    const from = mailboxes([email.from])?.[0];
    const to = mailboxes(email.to);
    const cc = mailboxes(email.cc);
    const bcc = mailboxes(email.bcc);
    const replyTo = email.replyTo === null ? null : mailboxes([email.replyTo])?.[0];
    if (!from || !to || !cc || !bcc || replyTo === undefined) return { id: email.id, kind: 'failed', reason: 'A stored address is not a single valid e-mail address' };
    let rendered;
    try {
      rendered = await deps.renderEmail(templateOf(email), email.data);
    } catch (error) {
      // Accepted data rendered when it was checked; a template failing now would fail on every retry.
      return { id: email.id, kind: 'failed', reason: `Could not render the template: ${(error as Error).message}`.slice(0, 1000) };
    }
    const envelopeTo = pending.recipients ?? [...to, ...cc, ...bcc].map((a) => a.address);
    const deadline = attemptDeadlineMs();
    const startBy = deadline === undefined ? undefined : deadline - RECORD_MARGIN_MS - SEND_ALLOWANCE_MS;
    try {
      const receipt = await deps.mailer.send({ messageId: messageIdOf(email, from), from, to, cc, bcc, replyTo, subject: email.subject, envelopeTo, ...rendered }, { startBy });
      return outcomeOfReceipt(pending, receipt, lastAttempt);
    } catch (error) {
      const failure = classifySmtpFailure(error as Error);
      // After a partial delivery the e-mail went out already: what is given up is the rest of its recipients.
      const giveUp = (reason: string): DeliveryOutcome =>
        deliveredBefore(pending) && pending.recipients
          ? { id: email.id, kind: 'sent', messageId: messageIdOf(email, from), response: '', undelivered: [...(pending.undelivered ?? []), `${pending.recipients.join(', ')} (${reason})`].join(', ').slice(0, 1000) }
          : { id: email.id, kind: 'failed', reason: reason.slice(0, 1000) };
      const deferred = (reason: string): DeliveryOutcome => ({
        id: email.id,
        kind: 'deferred',
        reason,
        ...(pending.recipients ? { recipients: pending.recipients, delivered: deliveredBefore(pending) } : {}),
        ...(pending.undelivered ? { undelivered: pending.undelivered } : {}),
      });
      // Nothing reached the server: the next attempt sends it as it was (the last one gives it up, saying why).
      if (error instanceof NotSentInTime) return lastAttempt ? giveUp(`Gave up after the last attempt: ${error.message}`) : deferred(error.message);
      if (failure.kind === 'permanent') return giveUp(failure.reason);
      // A connection or login problem (no reply, 5xx greeting, 535 EAUTH) is the operator's to see: log it.
      deps.logger.warn({ emailId: email.id, code: (error as { code?: string }).code, command: failure.command, responseCode: failure.responseCode, reason: failure.reason }, 'SMTP attempt failed temporarily');
      if (lastAttempt) return giveUp(`Gave up after the last attempt: ${failure.reason}`);
      return deferred(failure.reason);
    }
  }

  /**
   * One delivery attempt of the delivery's e-mails still queued: rendered and handed to the SMTP pool together
   * (its connections send them in parallel), each outcome recorded as soon as the server has answered (those that
   * come while a statement runs go into the next one). Sent and failed e-mails are never sent again, so a worker
   * lost in the middle of a batch leaves to the next attempt only the e-mails it had not recorded sent or failed, not
   * the whole batch. An e-mail whose attempt failed temporarily, for all its recipients or some, is returned as
   * deferred (failed, or sent to those who took it, when this was the last attempt); who is left to try is kept
   * both in that result and with the e-mail, so an attempt retried after a worker lost before returning it sends
   * to those left only. After such a loss the counts returned are the last attempt's only.
   */
  async function deliverEmails(input: { deliveryId: string; emails: readonly PendingEmail[]; lastAttempt: boolean }): Promise<DeliverEmailsResult> {
    const em = deps.orm.em.fork();
    const pendingById = new Map(input.emails.map((e) => [e.id, e]));
    const queued = await loadQueuedEmails(em, [...pendingById.keys()]);
    const recorder = writeInGroups<DeliveryOutcome>((group) => recordSentOutcomes(input.deliveryId, group));
    const outcomes = await Promise.all(
      queued.map(async (email) => {
        const outcome = await attempt(email, whatIsLeft(pendingById.get(email.id)!, email.deferral), input.lastAttempt);
        recorder.add(outcome);
        return outcome;
      }),
    );
    await recorder.settled();
    const count = (kind: DeliveryOutcome['kind']) => outcomes.filter((o) => o.kind === kind).length;
    const deferred = outcomes.flatMap((o) =>
      o.kind === 'deferred'
        ? [{ id: o.id, ...(o.recipients ? { recipients: [...o.recipients] } : {}), ...(o.delivered !== undefined ? { delivered: o.delivered } : {}), ...(o.undelivered ? { undelivered: [...o.undelivered] } : {}) }]
        : [],
    );
    const result = { sent: count('sent'), failed: count('failed'), deferred };
    deps.logger.info({ deliveryId: input.deliveryId, sent: result.sent, failed: result.failed, deferred: deferred.length }, 'e-mail delivery attempt');
    return result;
  }

  /**
   * Records what the SMTP server said about a group of e-mails. They went out already: a failure here must not fail
   * the activity, whose retry would find them still queued and send them again. A statement that may pass later
   * (a dropped connection, a serialization failure, a restart) is tried again here while the attempt has time left
   * (never past Temporal's own limit for it, where a new attempt would start beside this one and send again); one
   * PostgreSQL refuses, or a database away for longer, is logged with the outcomes and given up: those e-mails stay
   * `queued` (an operator sees them and the log says what became of them), never sent twice. Each group of an
   * attempt keeps to the same margin, so a group whose turn comes after it is not tried at all: a statement started
   * that late could commit after a new attempt had loaded those e-mails as still queued.
   */
  async function recordSentOutcomes(deliveryId: string, outcomes: readonly DeliveryOutcome[]): Promise<void> {
    const deadline = (attemptDeadlineMs() ?? Date.now() + RECORD_OUTSIDE_ACTIVITY_MS) - RECORD_MARGIN_MS;
    const giveUp = (err: unknown) => {
      const sent = outcomes.map((o) => ({ id: o.id, kind: o.kind }));
      deps.logger.error({ deliveryId, outcomes: sent, err }, 'e-mail outcomes not recorded after sending; not sent again');
    };
    if (Date.now() > deadline) return giveUp(new Error('the attempt is too close to its time limit to record them'));
    for (let round = 0; ; round++) {
      try {
        await recordDeliveryOutcomes(deps.orm.em.fork(), outcomes);
        return;
      } catch (error) {
        const permanent = permanentFailureOf(error) !== error;
        const waitMs = Math.min(RECORD_FIRST_WAIT_MS * 2 ** round, RECORD_LONGEST_WAIT_MS);
        if (permanent || Date.now() + waitMs > deadline) return giveUp(error);
        deps.logger.warn({ deliveryId, err: error, retryInMs: waitMs }, 'e-mail outcomes not recorded yet; trying again');
        await delay(waitMs);
      }
    }
  }

  /**
   * The delivery cannot go on (deliverEmails failed for good): every e-mail of it still queued is ended with the
   * reason, so none stays queued without a delivery: failed, or sent when a deferral kept that some recipients took
   * it. Returns how many it failed. One bounded statement; repeating it changes nothing.
   */
  async function failQueuedEmails(input: { deliveryId: string; emailIds: readonly string[]; reason: string }): Promise<number> {
    const failed = await endQueuedEmailsOfStoppedDelivery(deps.orm.em.fork(), input.emailIds, input.reason.slice(0, 1000));
    deps.logger.error({ deliveryId: input.deliveryId, failed, reason: input.reason }, 'e-mail delivery stopped; queued e-mails ended');
    return failed;
  }

  return withPermanentFailures({ deliverEmails, failQueuedEmails });
}
