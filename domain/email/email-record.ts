import type { TemplateType } from './email-request.schema.ts';
import type { EmailEventKind, EmailStatus } from './email-status.ts';

/** A stored e-mail as its tenant reads it (GraphQL `email`, `emails`). */
export interface EmailRecord {
  readonly id: string;
  readonly batchId: string | null;
  readonly batchIndex: number | null;
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly replyTo: string | null;
  readonly subject: string;
  readonly templateType: TemplateType;
  readonly templateName: string | null;
  readonly status: EmailStatus;
  readonly attemptCount: number;
  readonly smtpMessageId: string | null;
  readonly smtpResponse: string | null;
  readonly failureReason: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly completedAt: Date | null;
}

export interface EmailEventRecord {
  readonly emailId: string;
  readonly kind: EmailEventKind;
  readonly detail: string | null;
  readonly occurredAt: Date;
}

/** Keyset position in a tenant's e-mails, newest first; `createdAt` as PostgreSQL prints it (microseconds). */
export interface EmailCursor {
  readonly createdAt: string;
  readonly id: string;
}

export interface EmailFilter {
  readonly status?: EmailStatus;
  readonly batchId?: string;
  readonly createdAfter?: Date;
  readonly createdBefore?: Date;
}

/** What a deferral left, as kept with the e-mail itself (`emails` row). */
export interface StoredDeferral {
  /** The recipients left to try; null: all of them (never deferred for some only). */
  readonly retryRecipients: readonly string[] | null;
  readonly deliveredToSomeone: boolean;
  readonly undeliveredRecipients: readonly string[];
}

/** What the delivery activity needs of a queued e-mail to render and send it. */
export interface QueuedEmail {
  readonly id: string;
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly replyTo: string | null;
  readonly subject: string;
  readonly templateType: TemplateType;
  readonly templateName: string | null;
  readonly templateContent: string | null;
  readonly data: Record<string, unknown>;
  /** What earlier attempts left, as the row keeps it. */
  readonly deferral: StoredDeferral;
}

/**
 * The result of one delivery attempt of one e-mail. `sent`: the server took it for at least one recipient;
 * `undelivered` names the recipients it refused for good (5xx at RCPT TO, or still deferred after the last
 * attempt). `deferred`: the e-mail stays queued; when `recipients` is set only these are tried again, and
 * `delivered` says whether the server took it for anyone already. `failed`: nobody got it.
 */
export type DeliveryOutcome =
  | { readonly id: string; readonly kind: 'sent'; readonly messageId: string; readonly response: string; readonly undelivered?: string }
  | {
      readonly id: string;
      readonly kind: 'deferred';
      readonly reason: string;
      readonly recipients?: readonly string[];
      /** Recipients refused for good so far (`address (reply)`), carried to the e-mail's final outcome. */
      readonly undelivered?: readonly string[];
      /** The server took it for at least one recipient, on this attempt or an earlier one. */
      readonly delivered?: boolean;
      readonly messageId?: string;
      readonly response?: string;
    }
  | { readonly id: string; readonly kind: 'failed'; readonly reason: string };

/** An e-mail of a delivery still to send: all its recipients, or after an attempt only those deferred. */
export interface PendingEmail {
  readonly id: string;
  readonly recipients?: readonly string[];
  /**
   * The server took it for at least one recipient on an earlier attempt. Absent in a delivery deferred before it was
   * kept: then `recipients` was set only after a partial delivery, and says so.
   */
  readonly delivered?: boolean;
  /** Recipients refused for good on earlier attempts (`address (reply)`), named when the e-mail is finally recorded. */
  readonly undelivered?: readonly string[];
}
