/** A mailbox as SMTP and the headers take it: the name and the bare address apart, never a caller's raw string. */
export interface MailAddress {
  readonly name: string;
  readonly address: string;
}

/** One rendered message ready for SMTP. Bcc recipients go in the envelope only, never in a header. */
export interface OutgoingEmail {
  /** Message-ID header: stable per stored e-mail, so a receiver can drop a duplicate after an uncertain resend. */
  readonly messageId: string;
  readonly from: MailAddress;
  readonly to: readonly MailAddress[];
  readonly cc: readonly MailAddress[];
  readonly bcc: readonly MailAddress[];
  readonly replyTo: MailAddress | null;
  readonly subject: string;
  readonly html: string;
  readonly text: string;
  /**
   * The envelope recipients (RCPT TO): every to, cc and bcc address, or on a retry only those a server deferred,
   * so recipients that already have the message do not get it twice. The headers still name every recipient.
   */
  readonly envelopeTo: readonly string[];
}

/** A recipient the server refused at RCPT TO while the message could still go to others. */
export interface RecipientRefusal {
  readonly address: string;
  /** The SMTP reply code (4xx: try later, 5xx: refused for good); absent when the server gave none. */
  readonly responseCode?: number;
  readonly reason: string;
}

/** What the SMTP server said: the message went to `accepted` (possibly none), each refused recipient with its reply. */
export interface MailerReceipt {
  readonly messageId: string;
  readonly response: string;
  readonly accepted: readonly string[];
  readonly rejected: readonly RecipientRefusal[];
}

/**
 * Sends mail; a port the SMTP adapter implements. Recipients refused at RCPT TO are reported in the receipt
 * (with none accepted when every one was refused); any other refusal is thrown as the transport's error,
 * carrying `responseCode` and `command` when the server answered (see `classifySmtpFailure`).
 */
export interface Mailer {
  /**
   * `startBy` (epoch ms): a message whose turn on a connection comes later is not sent at all (`NotSentInTime`), so a
   * delivery attempt never hands SMTP a message after it could still record what became of it.
   */
  send(email: OutgoingEmail, options?: { readonly startBy?: number }): Promise<MailerReceipt>;
  close(): void;
}

/** A message whose turn to be sent came after its `startBy`: nothing reached the server; it is sent on a later attempt. */
export class NotSentInTime extends Error {
  constructor() {
    super('Not sent: its turn on a connection came after the attempt could still record it');
    this.name = 'NotSentInTime';
  }
}
