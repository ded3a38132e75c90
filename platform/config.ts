/**
 * Every setting of the product: its environment variable, default and meaning.
 * Read once at start-up; a bad value stops the process with a message naming the variable.
 * `docs/configuration.md` is generated from SETTINGS (`npm run docs:config`) so the two never drift.
 */

type Parser<T> = (raw: string) => T;

interface Setting<T> {
  readonly env: string;
  readonly description: string;
  /** Raw default (as it would be written in the environment); undefined means optional. */
  readonly default?: string;
  readonly parse: Parser<T>;
}

const text: Parser<string> = (raw) => raw;

function integer(min: number, max: number): Parser<number> {
  return (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error(`must be an integer, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new Error(`must be between ${min} and ${max}, got ${value}`);
    return value;
  };
}

const url: Parser<string> = (raw) => {
  try {
    new URL(raw);
  } catch {
    throw new Error(`must be a URL, got "${raw}"`);
  }
  return raw;
};

const hostPort: Parser<string> = (raw) => {
  if (!/^[\w.-]+:\d{1,5}$/.test(raw)) throw new Error(`must be host:port, got "${raw}"`);
  return raw;
};

const encryptionKey: Parser<Buffer> = (raw) => {
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new Error('must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  return key;
};

const secondsList: Parser<number[]> = (raw) =>
  raw.split(',').map((part) => {
    const value = Number(part.trim());
    if (!Number.isFinite(value) || value < 0) throw new Error(`must be comma-separated seconds, got "${raw}"`);
    return value;
  });

const logLevel: Parser<string> = (raw) => {
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(raw)) throw new Error(`must be one of ${levels.join(', ')}`);
  return raw;
};

export const SETTINGS = {
  host: { env: 'HOST', default: '127.0.0.1', description: 'Interface the gateway listens on.', parse: text },
  port: { env: 'PORT', default: '3000', description: 'Port of the gateway (REST routes and /graphql).', parse: integer(0, 65535) },
  publicBaseUrl: {
    env: 'PUBLIC_BASE_URL',
    description: 'Base URL printed and used in links; defaults to http://HOST:PORT.',
    parse: url,
  },
  logLevel: { env: 'LOG_LEVEL', default: 'info', description: 'pino log level.', parse: logLevel },
  databaseUrl: {
    env: 'DATABASE_URL',
    description: 'PostgreSQL connection URL. Unset: `npm start` runs an embedded PostgreSQL under DATA_DIR.',
    parse: url,
  },
  databasePoolSize: { env: 'DATABASE_POOL_SIZE', default: '10', description: 'Connections per process.', parse: integer(1, 200) },
  dataDir: { env: 'DATA_DIR', default: '.data', description: 'Where embedded PostgreSQL and the Temporal dev server keep their data.', parse: text },
  embeddedPostgresPort: { env: 'EMBEDDED_POSTGRES_PORT', default: '54329', description: 'Port of the embedded PostgreSQL.', parse: integer(1, 65535) },
  temporalAddress: {
    env: 'TEMPORAL_ADDRESS',
    description: 'Temporal frontend host:port. Unset: `npm start` runs `temporal server start-dev`.',
    parse: hostPort,
  },
  temporalNamespace: { env: 'TEMPORAL_NAMESPACE', default: 'default', description: 'Temporal namespace.', parse: text },
  temporalTaskQueue: { env: 'TEMPORAL_TASK_QUEUE', default: 'payments', description: 'Task queue shared by gateway and worker.', parse: text },
  temporalCliPath: { env: 'TEMPORAL_CLI_PATH', description: 'Path of the `temporal` binary; default: found on PATH.', parse: text },
  temporalDevPort: { env: 'TEMPORAL_DEV_PORT', default: '7233', description: 'Frontend port of the embedded Temporal dev server.', parse: integer(1, 65535) },
  temporalUiPort: { env: 'TEMPORAL_UI_PORT', default: '8233', description: 'Web UI port of the embedded Temporal dev server.', parse: integer(1, 65535) },
  temporalUiUrl: { env: 'TEMPORAL_UI_URL', description: 'Temporal UI address to print when TEMPORAL_ADDRESS is set.', parse: url },
  operatorToken: {
    env: 'OPERATOR_TOKEN',
    description: 'Bearer token for GraphQL operator mutations (provisioning). Unset: operator mutations are refused.',
    parse: (raw: string) => {
      if (raw.length < 16) throw new Error('must be at least 16 characters');
      return raw;
    },
  },
  dataEncryptionKey: {
    env: 'DATA_ENCRYPTION_KEY',
    description: 'AES-256-GCM key (32 bytes, base64) for secrets stored encrypted (webhook secrets, gateway credentials).',
    parse: encryptionKey,
  },
  rateLimitPerMinute: {
    env: 'RATE_LIMIT_PER_MINUTE',
    default: '100',
    description: 'Default requests per minute per API key; a tenant may override it.',
    parse: integer(1, 1_000_000),
  },
  bodyLimitBytes: { env: 'BODY_LIMIT_BYTES', default: '65536', description: 'Largest accepted request body (413 beyond).', parse: integer(1024, 10_485_760) },
  webhookRetrySchedule: {
    env: 'WEBHOOK_RETRY_SCHEDULE',
    default: '0,5,300,1800,7200,18000,36000,36000',
    description: 'Seconds to wait before each webhook delivery attempt (first is the initial attempt).',
    parse: secondsList,
  },
  webhookTimeoutMs: { env: 'WEBHOOK_TIMEOUT_MS', default: '15000', description: 'Timeout of one webhook attempt.', parse: integer(100, 120_000) },
  sandboxProcessorUrl: {
    env: 'SANDBOX_PROCESSOR_URL',
    description: 'Base URL of the sandbox processor used by merchant accounts whose gateway is `sandbox`. Unset: `npm start` runs one.',
    parse: url,
  },
  sandboxProcessorPort: { env: 'SANDBOX_PROCESSOR_PORT', default: '4100', description: 'Port of the sandbox processor `npm start` runs.', parse: integer(0, 65535) },
  processorTimeoutMs: {
    env: 'PROCESSOR_TIMEOUT_MS',
    default: '10000',
    description: 'Timeout of one processor call; an authorization without an answer is resolved by status inquiry, never retried blindly.',
    parse: integer(100, 120_000),
  },
  submitAnswerTimeoutMs: {
    env: 'SUBMIT_ANSWER_TIMEOUT_MS',
    default: '60000',
    description: 'How long the gateway waits for a payment workflow to answer before a 503 (the payment goes on; retry with the same Idempotency-Key).',
    parse: integer(1000, 600_000),
  },
  threeDSecureTimeoutSeconds: {
    env: 'THREE_DS_TIMEOUT_SECONDS',
    default: '900',
    description: 'How long a Pending 3-D Secure payment waits for completion before it is voided and failed.',
    parse: integer(1, 86_400),
  },
} as const satisfies Record<string, Setting<unknown>>;

type Settings = typeof SETTINGS;
type Parsed<S> = S extends Setting<infer T> ? T : never;

export type Config = {
  readonly [K in keyof Settings]: Settings[K] extends { default: string } ? Parsed<Settings[K]> : Parsed<Settings[K]> | undefined;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses every setting from `env`, collecting all problems before failing. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const result: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    const raw = env[setting.env];
    const value = raw === undefined || raw === '' ? setting.default : raw;
    if (value === undefined) {
      result[key] = undefined;
      continue;
    }
    try {
      result[key] = setting.parse(value);
    } catch (error) {
      problems.push(`${setting.env}: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return result as Config;
}

export function gatewayBaseUrl(config: Config): string {
  return config.publicBaseUrl ?? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`;
}
