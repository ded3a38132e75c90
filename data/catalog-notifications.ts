import type { MikroORM } from '@mikro-orm/postgresql';

/** The channel `notify_catalog_change()` (migration 000014) notifies on every change of `products`. */
const CATALOG_CHANNEL = 'catalog_changes';

/** One committed change: a product (its tenant and id), or every product (a truncate, or a payload not understood). */
export type CatalogChange = { readonly everything: true } | { readonly everything: false; readonly tenantId: number; readonly productId: number };

/** Who hears the catalog's changes, and when they may have been missed. */
export interface CatalogChangeListener {
  /** LISTEN is in place (at start and after every reconnect): changes committed before may have been missed. */
  onListening(): void;
  /** The connection is gone: changes go unheard until the next `onListening`. */
  onLost(error: unknown): void;
  onChange(change: CatalogChange): void;
}

export interface CatalogNotifications {
  close(): Promise<void>;
}

/** The part of a `pg` client (the driver MikroORM runs on) a dedicated LISTEN connection uses. */
interface NotificationClient {
  connect(): Promise<void>;
  query(statement: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'notification', handler: (message: { channel: string; payload?: string }) => void): void;
  on(event: 'error', handler: (error: Error) => void): void;
  on(event: 'end', handler: () => void): void;
}

/** The `pg` pool behind the ORM: its client class and its connection options, for one connection of our own. */
interface DriverPool {
  readonly Client: new (options: unknown) => NotificationClient;
  readonly options: Record<string, unknown>;
}

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

/**
 * Listens for `catalog_changes` on a connection of its own (outside the ORM's pool, which it would otherwise
 * hold forever), with the pool's connection settings. A lost connection is reported, then re-established
 * with a growing pause; every successful LISTEN is reported, since changes in between went unheard.
 */
export async function listenForCatalogChanges(orm: MikroORM, listener: CatalogChangeListener): Promise<CatalogNotifications> {
  let closed = false;
  let current: NotificationClient | undefined;
  let retryMs = FIRST_RETRY_MS;
  let retryTimer: NodeJS.Timeout | undefined;

  const retryAfter = (error: unknown) => {
    if (closed) return;
    listener.onLost(error);
    retryTimer = setTimeout(() => void connect(), retryMs);
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  };

  const connect = async () => {
    let pool: DriverPool;
    try {
      // Asked again at every attempt: PostgreSQL may be down when the gateway starts.
      pool = (await orm.em.getConnection().getNativeClient()) as unknown as DriverPool;
    } catch (error) {
      retryAfter(error);
      return;
    }
    if (closed) return;
    // pg-pool keeps the password out of the options' enumerable keys (so it is never logged): copy it explicitly.
    const client = new pool.Client({ ...pool.options, password: pool.options.password, keepAlive: true });
    current = client;
    let lost = false;
    const lose = (error: unknown) => {
      if (lost) return;
      lost = true;
      client.end().catch(() => {});
      retryAfter(error);
    };
    // An 'error' event without a handler would take the process down; after the first, the rest change nothing.
    client.on('error', lose);
    client.on('end', () => lose(new Error('the catalog notification connection ended')));
    client.on('notification', (message) => {
      if (message.channel === CATALOG_CHANNEL && !lost) listener.onChange(parseChange(message.payload));
    });
    try {
      await client.connect();
      await client.query(`listen ${CATALOG_CHANNEL}`);
    } catch (error) {
      lose(error);
      return;
    }
    if (closed) await client.end().catch(() => {});
    if (lost || closed) return;
    retryMs = FIRST_RETRY_MS;
    listener.onListening();
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      await current?.end().catch(() => {});
    },
  };
}

/** `<tenant id>/<product id>`, or `*` for every product; anything else is taken as every product (never too little). */
function parseChange(payload: string | undefined): CatalogChange {
  const match = /^(\d+)\/(\d+)$/.exec(payload ?? '');
  return match ? { everything: false, tenantId: Number(match[1]), productId: Number(match[2]) } : { everything: true };
}
