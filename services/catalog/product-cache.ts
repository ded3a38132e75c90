import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { listenForCatalogChanges, type CatalogChange, type CatalogChangeListener } from '../../data/catalog-notifications.ts';
import { findTenantProduct, type PayableProduct } from '../../data/queries/products.ts';
import type { Logger } from '../../domain/logger.ts';

/** How a submit finds the product it pays for: the tenant's product by id, or undefined (another tenant's too). */
export interface ProductLookup {
  find(em: EntityManager, tenantId: number, productId: number): Promise<PayableProduct | undefined>;
}

/** Far more products than a gateway sells; past it the oldest entry goes, so unknown growth cannot exhaust memory. */
const MAX_ENTRIES = 10_000;

/**
 * The products a gateway process sells, kept in memory so a warm submit reads its product without a round
 * trip. PostgreSQL tells it of every committed change of `products` (`catalog_changes`, migration 000014):
 * the entry is dropped when the notification arrives, so the next submit reads the row as committed. While
 * the notification connection is down nothing is served from memory or kept (a change could go unheard),
 * and each new LISTEN starts from an empty cache. A read that a notification overtook is not kept either: it
 * may have seen the row before the change committed. Entries are keyed by tenant and product: a tenant never
 * sees another's product. Velocity limits are not cached (screening reads them as committed).
 */
export class ProductCache implements ProductLookup, CatalogChangeListener {
  readonly #entries = new Map<string, PayableProduct>();
  /** Bumped when every entry goes (a truncate, a loss, a new LISTEN): a read started before is not kept. */
  #epoch = 0;
  /** Reads in flight by key: a change of their product heard meanwhile marks them stale, and they are not kept. */
  readonly #reads = new Map<string, Set<{ stale: boolean }>>();
  #listening = false;
  #changeWaiters: { readonly key: string; readonly resolve: () => void }[] = [];
  #listeningWaiters: (() => void)[] = [];
  readonly #logger?: Logger;

  constructor(options: { logger?: Logger } = {}) {
    this.#logger = options.logger;
  }

  async find(em: EntityManager, tenantId: number, productId: number): Promise<PayableProduct | undefined> {
    const key = keyOf(tenantId, productId);
    const cached = this.#listening ? this.#entries.get(key) : undefined;
    if (cached) return cached;
    const epoch = this.#epoch;
    const read = { stale: false };
    const reads = this.#reads.get(key) ?? new Set();
    this.#reads.set(key, reads.add(read));
    try {
      const product = await findTenantProduct(em, tenantId, productId);
      if (product && this.#listening && epoch === this.#epoch && !read.stale) this.#keep(key, product);
      return product;
    } finally {
      reads.delete(read);
      if (reads.size === 0) this.#reads.delete(key);
    }
  }

  onChange(change: CatalogChange): void {
    const key = change.everything ? undefined : keyOf(change.tenantId, change.productId);
    if (key === undefined) this.#forgetEverything();
    else {
      this.#entries.delete(key);
      for (const read of this.#reads.get(key) ?? []) read.stale = true;
    }
    const [heard, waiting] = partition(this.#changeWaiters, (waiter) => key === undefined || waiter.key === key);
    this.#changeWaiters = waiting;
    for (const waiter of heard) waiter.resolve();
  }

  onListening(): void {
    this.#forgetEverything();
    this.#listening = true;
    this.#logger?.info({}, 'listening for product changes; the product cache starts empty');
    const waiters = this.#listeningWaiters;
    this.#listeningWaiters = [];
    for (const resolve of waiters) resolve();
  }

  onLost(error: unknown): void {
    this.#forgetEverything();
    this.#listening = false;
    this.#logger?.warn({ err: error }, 'product change notifications lost; products are read from the database until they are back');
  }

  /** Whether products are served from memory (the notification connection is listening). */
  get listening(): boolean {
    return this.#listening;
  }

  /**
   * Settles once a change of this product (or of every product) has been heard and its entry dropped: how a test
   * waits for a notification instead of sleeping. Ask before making the change, so the notification cannot be missed.
   */
  nextChange(tenantId: number, productId: number): Promise<void> {
    return new Promise((resolve) => this.#changeWaiters.push({ key: keyOf(tenantId, productId), resolve }));
  }

  /** Settles at the next LISTEN (after a lost connection): how a test waits for the reconnect. */
  nextListening(): Promise<void> {
    return new Promise((resolve) => this.#listeningWaiters.push(resolve));
  }

  #forgetEverything(): void {
    this.#epoch += 1;
    this.#entries.clear();
  }

  #keep(key: string, product: PayableProduct): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    // Shared by every request from now on: frozen, so no caller can change what the next one reads.
    this.#entries.set(key, deepFreeze(product));
  }
}

/** A product cache listening for changes on a connection of its own; `close` stops listening. */
export async function openProductCache(deps: { orm: MikroORM; logger?: Logger }): Promise<{ cache: ProductCache; close: () => Promise<void> }> {
  const cache = new ProductCache({ logger: deps.logger });
  const notifications = await listenForCatalogChanges(deps.orm, cache);
  return { cache, close: () => notifications.close() };
}

const keyOf = (tenantId: number, productId: number) => `${tenantId}/${productId}`;

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
