import { SMTPServer, type SMTPServerEnvelope } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export interface ReceivedMail {
  readonly envelope: { readonly mailFrom: string; readonly rcptTo: readonly string[] };
  readonly mail: ParsedMail;
  readonly raw: string;
}

/**
 * What the server answers a DATA for a recipient: accept, an SMTP error code (451 temporary, 550 permanent), or
 * nothing at all (`hang`: the sender waits until it gives up or dies).
 */
type Reply = 'accept' | 'hang' | number;

/**
 * A real SMTP server in the test process (smtp-server): it parses every accepted message with mailparser and
 * keeps it for assertions. Replies can be scripted per recipient (`451, 451` then accept) to exercise retries.
 */
export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>` for SMTP_URL. */
  readonly url: string;
  readonly received: ReceivedMail[];
  /** DATA commands seen per recipient, accepted or refused. */
  attempts(recipient: string): number;
  /** Messages accepted for a recipient (envelope, so bcc counts too). */
  receivedBy(recipient: string): ReceivedMail[];
  /** The next DATA replies for messages to this recipient; after the list, `then` (default accept). */
  script(recipient: string, replies: readonly Reply[], then?: Reply): void;
  /** The next replies to `RCPT TO` this recipient (refusing the recipient only, the message may go to others); after the list, `then`. */
  scriptRcpt(recipient: string, replies: readonly Reply[], then?: Reply): void;
  /** `RCPT TO` commands seen for a recipient, accepted or refused. */
  rcptAttempts(recipient: string): number;
  waitFor(recipient: string, count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

function envelopeOf(envelope: SMTPServerEnvelope) {
  return {
    mailFrom: envelope.mailFrom ? envelope.mailFrom.address : '',
    rcptTo: envelope.rcptTo.map((r) => r.address.toLowerCase()),
  };
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const attempts = new Map<string, number>();
  const scripts = new Map<string, { replies: Reply[]; then: Reply }>();
  const rcptScripts = new Map<string, { replies: Reply[]; then: Reply }>();
  const rcptAttempts = new Map<string, number>();
  const smtpError = (reply: number) => Object.assign(new Error(reply >= 500 ? 'Mailbox unavailable' : 'Local error, try again later'), { responseCode: reply });

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 10 * 1024 * 1024,
    onRcptTo(address, _session, callback) {
      const recipient = address.address.toLowerCase();
      rcptAttempts.set(recipient, (rcptAttempts.get(recipient) ?? 0) + 1);
      const script = rcptScripts.get(recipient);
      const reply = script ? (script.replies.shift() ?? script.then) : 'accept';
      if (reply === 'hang') return;
      callback(reply === 'accept' ? undefined : smtpError(reply));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const envelope = envelopeOf(session.envelope);
        let reply: Reply = 'accept';
        for (const recipient of envelope.rcptTo) {
          attempts.set(recipient, (attempts.get(recipient) ?? 0) + 1);
          const script = scripts.get(recipient);
          if (script) reply = script.replies.shift() ?? script.then;
        }
        if (reply === 'hang') return;
        if (reply !== 'accept') {
          callback(smtpError(reply));
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({ envelope, mail: await simpleParser(raw), raw });
        callback(null, `Ok: queued as ${received.length}`);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as { port: number }).port;
  const receivedBy = (recipient: string) => received.filter((m) => m.envelope.rcptTo.includes(recipient.toLowerCase()));

  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    attempts: (recipient) => attempts.get(recipient.toLowerCase()) ?? 0,
    receivedBy,
    script(recipient, replies, then = 'accept') {
      scripts.set(recipient.toLowerCase(), { replies: [...replies], then });
    },
    scriptRcpt(recipient, replies, then = 'accept') {
      rcptScripts.set(recipient.toLowerCase(), { replies: [...replies], then });
    },
    rcptAttempts: (recipient) => rcptAttempts.get(recipient.toLowerCase()) ?? 0,
    async waitFor(recipient, count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (receivedBy(recipient).length < count) {
        if (Date.now() > deadline) throw new Error(`${recipient} received ${receivedBy(recipient).length} of ${count} messages in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return receivedBy(recipient);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
