/** Where an e-mail is: accepted and waiting (`queued`), handed to the SMTP server (`sent`), or given up (`failed`). */
export const EMAIL_STATUSES = ['queued', 'sent', 'failed'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/** Entries of an e-mail's history: its statuses, plus each temporary SMTP failure (`deferred`) before a retry. */
export const EMAIL_EVENT_KINDS = ['queued', 'deferred', 'sent', 'failed'] as const;
export type EmailEventKind = (typeof EMAIL_EVENT_KINDS)[number];
