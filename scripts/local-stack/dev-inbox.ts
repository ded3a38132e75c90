import { MailDev } from 'maildev';

export interface DevInbox {
  /** SMTP_URL for the worker. */
  readonly smtpUrl: string;
  /** The web page showing every message it received. */
  readonly webUrl: string;
  stop(): Promise<void>;
}

/**
 * The local development inbox `npm start` runs when SMTP_URL is unset: maildev's SMTP server catches every
 * e-mail the worker sends (nothing leaves the machine) and its web page shows them rendered, HTML and text.
 * The last 500 messages are kept, as .eml files under the data directory.
 */
export async function startDevInbox(options: { host: string; smtpPort: number; webPort: number; mailDirectory: string }): Promise<DevInbox> {
  const inbox = new MailDev({
    smtp: options.smtpPort,
    web: options.webPort,
    ip: options.host,
    webIp: options.host,
    mailDirectory: options.mailDirectory,
    silent: true,
    maxEmails: 500,
  });
  // maildev's web server announces itself with console.info whatever `silent` says; `npm start`'s banner names the
  // inbox instead, so that one line is held back while it starts (nothing else logs meanwhile: startup is sequential).
  const announce = console.info;
  console.info = () => {};
  try {
    await inbox.start();
  } finally {
    console.info = announce;
  }
  return {
    smtpUrl: `smtp://${options.host}:${options.smtpPort}`,
    webUrl: `http://${options.host}:${options.webPort}`,
    stop: () => inbox.stop(),
  };
}
