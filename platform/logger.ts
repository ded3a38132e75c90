import pino, { type Logger, type DestinationStream } from 'pino';

/**
 * Paths that may carry card data, keys or credentials anywhere in a log object. pino's redaction is
 * path-based, so every place such a value can appear is listed; `censorCardNumbers` is the backstop
 * for free text (error messages) that a path cannot reach.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-service-lead-key"]',
  'req.headers.cookie',
  'headers.authorization',
  '*.authorization',
  '*.pan',
  '*.cvv',
  '*.card',
  'card',
  '*.password',
  '*.apiKey',
  '*.secret',
  '*.token',
  '*.credentials',
  '*.gatewayCredentials',
  'body',
  '*.body',
  // PostgreSQL's errors echo the values they refused: the text around a bad character (`where`), a duplicate key's
  // value (`detail`). Their code and message say what went wrong without them.
  'err.where',
  'err.detail',
  'err.hint',
  'err.cause.where',
  'err.cause.detail',
  'err.cause.hint',
];

const CARD_NUMBER = /\b(?:\d[ -]?){12,18}\d\b/g;

/** Masks anything shaped like a card number (13-19 digits) in free text. */
export function censorCardNumbers(text: string): string {
  return text.replace(CARD_NUMBER, (match) => {
    const digits = match.replace(/\D/g, '');
    return `${digits.slice(0, 6)}…${digits.slice(-4)}`;
  });
}

/**
 * What MikroORM appends to a PostgreSQL error's message (and so its stack) from the error's `detail` and `hint`: the
 * refused values themselves (`Key (email_tenant_key)=(…) already exists`), out of reach of the `err.detail` path.
 */
const DRIVER_DETAIL = /\n - (?:detail|hint): [^\n]*/g;

/** An error as pino serialized it, made safe to write: card numbers masked, the driver's echo of values cut. */
function scrubError(err: { message?: unknown; stack?: unknown; cause?: unknown }, depth = 0): void {
  if (typeof err.message === 'string') err.message = censorCardNumbers(err.message.replace(DRIVER_DETAIL, ''));
  if (typeof err.stack === 'string') err.stack = censorCardNumbers(err.stack.replace(DRIVER_DETAIL, ''));
  if (depth < 5 && err.cause !== null && typeof err.cause === 'object') scrubError(err.cause as typeof err, depth + 1);
}

export function createLogger(options: { level: string; name?: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      name: options.name,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: {
        log(object) {
          const message = object.msg;
          if (typeof message === 'string') object.msg = censorCardNumbers(message);
          const err = object.err as { message?: unknown; stack?: unknown; cause?: unknown } | undefined;
          if (err !== null && typeof err === 'object') scrubError(err);
          return object;
        },
      },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((arg) => (typeof arg === 'string' ? censorCardNumbers(arg) : arg));
          return method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    options.destination,
  );
}

export type { Logger };
