/**
 * What an SMTP failure means for the e-mail. Only a 5xx reply to the message itself (MAIL FROM, RCPT TO, DATA)
 * is a refusal that will not change (550 no such user, 554 rejected): the e-mail fails at once. A 4xx reply is
 * the server asking to try later (greylisting, 451 local error). Everything else concerns the connection, not
 * the message: no reply at all (refused, reset, timeout), a 5xx greeting, or a refused login (535 EAUTH, our
 * credentials or the server's configuration, fixed by an operator). Those are temporary: the e-mail waits for
 * the next attempt on the schedule (and is failed after the last), and the activity logs them.
 */
export type SmtpFailure = { readonly kind: 'temporary' | 'permanent'; readonly reason: string; readonly responseCode?: number; readonly command?: string };

/** The SMTP commands whose replies judge the message; a 5xx to anything else is about the session. */
const MESSAGE_COMMANDS = new Set(['MAIL FROM', 'RCPT TO', 'DATA']);

export function classifySmtpFailure(error: { message?: string; responseCode?: number; response?: string; code?: string; command?: string }): SmtpFailure {
  const responseCode = typeof error.responseCode === 'number' ? error.responseCode : undefined;
  const command = typeof error.command === 'string' ? error.command : undefined;
  const reason = (error.response ?? error.message ?? String(error)).replace(/\s+/g, ' ').trim().slice(0, 1000);
  const known = { ...(responseCode !== undefined ? { responseCode } : {}), ...(command !== undefined ? { command } : {}) };
  if (responseCode !== undefined && responseCode >= 500 && responseCode < 600 && command !== undefined && MESSAGE_COMMANDS.has(command)) {
    return { kind: 'permanent', reason, ...known };
  }
  // Nodemailer refuses a message it cannot build (bad address after all, oversized) without talking to a server.
  if (error.code === 'EENVELOPE' && responseCode === undefined) return { kind: 'permanent', reason, ...known };
  return { kind: 'temporary', reason, ...known };
}
