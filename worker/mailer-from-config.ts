import type { Config } from '../platform/config.ts';
import { createSmtpMailer } from '../adapters/smtp/smtp-mailer.ts';
import type { Mailer } from '../domain/email/mailer.ts';
import { createEmailRenderer, type EmailRenderer } from '../domain/email/render-email.ts';
import { createStringTemplateCompiler } from '../domain/email/string-templates.ts';

/**
 * The worker's way out for e-mail: the SMTP pool of SMTP_URL. Without SMTP_URL every attempt fails temporarily
 * with a reason saying so (the e-mails stay queued through the retry schedule), rather than the worker refusing
 * to start for deployments that send no e-mail.
 */
export function mailerFromConfig(config: Config): Mailer {
  if (config.smtpUrl) return createSmtpMailer({ url: config.smtpUrl, maxConnections: config.smtpPoolSize });
  return {
    send: () => Promise.reject(Object.assign(new Error('SMTP_URL is not set: this worker cannot send e-mail'), { code: 'ECONFIG' })),
    close: () => {},
  };
}

/** Renders templates with a per-process cache of compiled string templates. */
export function emailRendererFromConfig(): EmailRenderer {
  return createEmailRenderer({ compiler: createStringTemplateCompiler() });
}
