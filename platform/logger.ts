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

/**
 * 13 digits or more, whole or in groups split by single spaces, dashes, dots or underscores, wherever they stand:
 * inside a word (`pay_4242…`, `x4242…x`), where `\b` finds no edge, and in longer runs (a card number followed by its
 * CVV), which a 13-to-19 pattern bounded on both sides would pass over. Stricter than the Luhn test answers use
 * (`maskCardNumbers`): a log has no number that long it must keep whole, and a mistyped card is still a card.
 */
const CARD_NUMBER = /(?<!\d)\d(?:[ ._-]?\d){12,}(?!\d)/g;

/** Masks anything shaped like a card number (13 digits or more) in free text. */
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

/**
 * A request's URL as the log shows it: the path (decoded, card numbers masked) without its query string, which may
 * carry anything a caller typed (`/payments?email=<a card number>`, GraphQL variables over GET) in any encoding.
 */
export function loggedUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape: the path as sent, masked all the same.
  }
  return censorCardNumbers(decoded) + (queryAt === -1 ? '' : '?…');
}

/** Request fields the gateway logs (Fastify's own serializer, its URL made safe by `loggedUrl`). */
interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

export function createLogger(options: { level: string; name?: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      name: options.name,
      // Fastify's request serializer logs the URL whole; the gateway's logger names its own, which Fastify keeps.
      serializers: {
        req: (req: LoggedRequest) => ({
          method: req.method,
          url: typeof req.url === 'string' ? loggedUrl(req.url) : undefined,
          host: typeof req.host === 'string' ? censorCardNumbers(req.host) : undefined,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
      },
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
