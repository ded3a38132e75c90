import type { Logger } from 'pino';

/** A server a process needs at start, by the setting that names it. */
export interface NeededServer {
  /** What it is: `PostgreSQL`, `Temporal`. */
  readonly name: string;
  /** The environment variable that says where it is. */
  readonly setting: string;
  /** Where the setting says it is, without credentials. */
  readonly address: string;
}

/** `host:port/database` of a PostgreSQL URL: where it points, never its user's password. */
export function databaseAddress(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'the address it gives';
  }
}

/** Why a process cannot start without `server`, in the words of the setting to change. */
export function unreachableServer(server: NeededServer, cause: unknown): string {
  return `Cannot reach ${server.name} at ${server.address} (${server.setting}): ${reasonOf(cause)}. Start it, or set ${server.setting} to where it runs`;
}

/**
 * A failure in a few words. `localhost` tried at each of its addresses (::1, then 127.0.0.1) fails with an
 * AggregateError whose own message is empty: its errors' messages say it.
 */
function reasonOf(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  if (cause.message) return cause.message;
  if (cause instanceof AggregateError && cause.errors.length > 0) return cause.errors.map(reasonOf).join('; ');
  const code = (cause as { code?: unknown }).code;
  return typeof code === 'string' ? code : cause.name;
}

/**
 * Runs a process's connection to a server it cannot work without; when that fails, logs why by the setting to
 * change and exits 1, where Node would print a driver's stack trace ("Failed to connect before the deadline")
 * naming neither the server nor the setting. `npm start` repeats the line when it restarts the process.
 */
export async function reachOrExit<T>(logger: Pick<Logger, 'error'>, server: NeededServer, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (error) {
    logger.error({ err: error }, unreachableServer(server, error));
    process.exit(1);
  }
}
