import nodemailer from 'nodemailer';
import pLimit from 'p-limit';
import { NotSentInTime, type Mailer, type MailAddress, type RecipientRefusal } from '../../domain/email/mailer.ts';

export interface SmtpMailerOptions {
  /** `smtp://user:pass@host:port` or `smtps://...` (SMTP_URL). */
  readonly url: string;
  /** Connections kept open to the server; messages of a batch go out over them in parallel. */
  readonly maxConnections: number;
  readonly socketTimeoutMs?: number;
}

interface RejectedError {
  recipient?: string;
  responseCode?: number;
  response?: string;
  message?: string;
}

const refusalsOf = (rejected: readonly string[] | undefined, errors: readonly RejectedError[] | undefined): RecipientRefusal[] =>
  (rejected ?? []).map((address) => {
    const error = errors?.find((e) => e.recipient === address);
    const reason = (error?.response ?? error?.message ?? 'refused').replace(/\s+/g, ' ').trim().slice(0, 500);
    return { address, reason, ...(typeof error?.responseCode === 'number' ? { responseCode: error.responseCode } : {}) };
  });

/** Nodemailer takes `{name, address}` and encodes the name itself; an empty name is just the address. */
const mailbox = (a: MailAddress) => (a.name === '' ? a.address : { name: a.name, address: a.address });

/**
 * The Mailer over SMTP with nodemailer's pooled transport: connections are opened once and reused for every
 * message (no handshake per e-mail), at most `maxConnections` at a time; further messages wait in its queue.
 * The envelope is given explicitly (MAIL FROM the sender's bare address, RCPT TO the recipients asked for), so
 * nodemailer never derives it from header text.
 */
export function createSmtpMailer(options: SmtpMailerOptions): Mailer {
  const transport = nodemailer.createTransport({
    url: options.url,
    pool: true,
    maxConnections: options.maxConnections,
    maxMessages: Number.POSITIVE_INFINITY,
    socketTimeout: options.socketTimeoutMs ?? 30_000,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
  });
  // The messages of every delivery attempt of the worker wait here for a connection, not in nodemailer's own queue, so
  // a message's turn is known when it comes: one whose attempt has run out of time is not sent (`startBy`).
  const turns = pLimit(options.maxConnections);
  return {
    send: (email, sendOptions = {}) =>
      turns(() => {
        if (sendOptions.startBy !== undefined && Date.now() > sendOptions.startBy) throw new NotSentInTime();
        return sendNow(email);
      }),
    close() {
      transport.close();
    },
  };

  async function sendNow(email: Parameters<Mailer['send']>[0]) {
    try {
      const info = await transport.sendMail({
        messageId: email.messageId,
        from: mailbox(email.from),
        to: email.to.map(mailbox),
        cc: email.cc.length > 0 ? email.cc.map(mailbox) : undefined,
        bcc: email.bcc.length > 0 ? email.bcc.map(mailbox) : undefined,
        replyTo: email.replyTo ? mailbox(email.replyTo) : undefined,
        envelope: { from: email.from.address, to: [...email.envelopeTo] },
        subject: email.subject,
        html: email.html,
        text: email.text,
        disableFileAccess: true,
        disableUrlAccess: true,
      });
      const accepted = ((info.accepted ?? []) as (string | { address: string })[]).map((a) => (typeof a === 'string' ? a : a.address));
      return { messageId: info.messageId, response: info.response, accepted, rejected: refusalsOf(info.rejected as string[], (info as { rejectedErrors?: RejectedError[] }).rejectedErrors) };
    } catch (error) {
      // Every recipient refused at RCPT TO: a per-recipient answer (some may only be deferred), not a failed transport.
      const refused = error as { command?: string; rejected?: string[]; rejectedErrors?: RejectedError[] };
      if (refused.command === 'RCPT TO' && refused.rejectedErrors && refused.rejectedErrors.length > 0) {
        return { messageId: email.messageId, response: '', accepted: [], rejected: refusalsOf(refused.rejected, refused.rejectedErrors) };
      }
      throw error;
    }
  }
}
