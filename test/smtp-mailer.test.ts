import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmtpMailer } from '../adapters/smtp/smtp-mailer.ts';
import { NotSentInTime, type OutgoingEmail } from '../domain/email/mailer.ts';

/** A real SMTP server that takes its time over each message, as a busy relay does. */
let server: SMTPServer;
let url: string;
const received: string[] = [];
beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => setTimeout(() => (received.push(session.envelope.rcptTo[0]!.address), callback()), 1_500));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const email = (to: string): OutgoingEmail => ({
  messageId: `<${to}@test.example>`,
  from: { name: '', address: 'shop@example.com' },
  to: [{ name: '', address: to }],
  cc: [],
  bcc: [],
  replyTo: null,
  subject: 'Order',
  html: '<p>Thanks</p>',
  text: 'Thanks',
  envelopeTo: [to],
});

describe('the SMTP mailer', () => {
  it('sends nothing whose turn on a connection comes after its startBy: those messages never reach the server', async () => {
    const mailer = createSmtpMailer({ url, maxConnections: 1 });
    try {
      const startBy = Date.now() + 500;
      const outcomes = await Promise.allSettled(['a@example.com', 'b@example.com', 'c@example.com'].map((to) => mailer.send(email(to), { startBy })));
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
      for (const late of outcomes.slice(1)) expect((late as PromiseRejectedResult).reason).toBeInstanceOf(NotSentInTime);
      expect(received).toEqual(['a@example.com']);

      // Without a time limit every message waits its turn and goes out.
      await Promise.all(['d@example.com', 'e@example.com'].map((to) => mailer.send(email(to))));
      expect(received).toEqual(['a@example.com', 'd@example.com', 'e@example.com']);
    } finally {
      mailer.close();
    }
  });
});
