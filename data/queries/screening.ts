import type { EntityManager } from '@mikro-orm/postgresql';

export type BlockKind = 'email' | 'card' | 'bin' | 'bin_country';

export interface BlocklistHit {
  readonly kind: BlockKind;
  /** A platform-wide entry rather than the tenant's own. */
  readonly platformWide: boolean;
}

/**
 * The BIN's prefixes of lengths 1 to 8: a blocked BIN of any length is one of them. A BIN entry blocks every card
 * starting with it, and looking its prefixes up by equality lets the `(kind, value)` index find them.
 */
function binPrefixes(bin: string): string[] {
  return Array.from({ length: Math.min(bin.length, 8) }, (_, index) => bin.slice(0, index + 1));
}

/** A PostgreSQL array literal of digit strings (a BIN's prefixes: nothing to quote). */
const textArray = (values: readonly string[]) => `{${values.filter((value) => /^\d+$/.test(value)).join(',')}}`;

export interface RecentSubmits {
  /** Submits with this card in the tenant in the product's card window. */
  readonly byCard: number;
  /** Submits with this e-mail for the product in the e-mail window. */
  readonly byEmail: number;
}

/** What `screen_submit` found, in the order it looks: blocklists, a live subscription, then velocity. */
export interface SubmitScreening {
  readonly blocks: BlocklistHit[];
  /** A live subscription of the e-mail to the product; only looked for when asked, and after no block. */
  readonly subscribed: boolean;
  /** The velocity step ran: no block, no subscription, and the product still exists. */
  readonly velocity?: {
    readonly recent: RecentSubmits;
    /** The product's limits as committed when the submit was counted. */
    readonly limits: { readonly card: number; readonly email: number };
    /** This submit was recorded: it is under both limits and now counts against them. */
    readonly recorded: boolean;
  };
  /** The submit order id reserved for a recorded submit, when `reserveOrderId` asked for one. */
  readonly orderId?: number;
  /** The product is gone (deleted since the caller read it); nothing was recorded. */
  readonly productMissing: boolean;
}

/**
 * The database checks of a submit in one round trip (`routines.screen_submit`, migration 000014): blocklist hits of the
 * e-mail, card fingerprint, BIN prefixes and BIN country; then, if none, a live subscription of the e-mail
 * when `checkSubscription`; then, if none, the velocity claim: locks on the card (per tenant) and the e-mail
 * (per product) held until the call commits, so concurrent submits of one card are counted one after another,
 * the counts of the card's submits in the product's window and the e-mail's in `emailWindowSeconds`, and this
 * submit recorded when it is under both of the product's limits; a recorded submit gets its order id when
 * `reserveOrderId` (no round trip of its own). It stops at the first step that finds something.
 */
export async function screenSubmitInDatabase(
  em: EntityManager,
  submit: {
    tenantId: number;
    productId: number;
    email: string;
    cardFingerprint: string;
    bin: string;
    binCountry?: string;
    checkSubscription: boolean;
    emailWindowSeconds: number;
    now: Date;
    reserveOrderId: boolean;
  },
): Promise<SubmitScreening> {
  const [row] = await em.execute<ScreeningRow[]>(
    `select * from routines.screen_submit(?::int, ?::int, ?::text, ?::text, ?::text[], ?::text, ?::boolean, ?::text, ?::text, ?::timestamptz, ?::int, ?::boolean)`,
    [
      submit.tenantId,
      submit.productId,
      submit.email,
      submit.cardFingerprint,
      textArray(binPrefixes(submit.bin)),
      submit.binCountry ?? '',
      submit.checkSubscription,
      `velocity/card/${submit.tenantId}/${submit.cardFingerprint}`,
      `velocity/email/${submit.productId}/${submit.email}`,
      submit.now,
      submit.emailWindowSeconds,
      submit.reserveOrderId,
    ],
  );
  const blocks = [
    ...row!.tenant_blocks.map((kind) => ({ kind, platformWide: false })),
    ...row!.platform_blocks.map((kind) => ({ kind, platformWide: true })),
  ];
  const counted = row!.card_count !== null && row!.email_count !== null && row!.card_limit !== null && row!.email_limit !== null;
  return {
    blocks,
    subscribed: row!.subscribed === true,
    productMissing: row!.product_found === false,
    ...(row!.order_id === null ? {} : { orderId: Number(row!.order_id) }),
    ...(counted
      ? {
          velocity: {
            recent: { byCard: row!.card_count!, byEmail: row!.email_count! },
            limits: { card: row!.card_limit!, email: row!.email_limit! },
            recorded: row!.recorded,
          },
        }
      : {}),
  };
}

/**
 * Whether the tenant's or the platform's blocklists hold the e-mail, the card (its fingerprint), a prefix of its issuer
 * number or its BIN country: the blocklist step of `screen_submit` alone, for a charge no checkout screens (a rebill).
 */
export async function isBlocklisted(em: EntityManager, subject: { tenantId: number; email: string; cardFingerprint: string; bin: string; binCountry?: string }): Promise<boolean> {
  const [row] = await em.execute<{ blocked: boolean }[]>(
    `select exists (select 1 from blocklist_entries b
      where (b.tenant_id is null or b.tenant_id = ?)
        and ((b.kind = 'email' and b.value = ?) or (b.kind = 'card' and b.value = ?)
          or (b.kind = 'bin' and b.value = any(?::text[])) or (b.kind = 'bin_country' and b.value = ?))) as blocked`,
    [subject.tenantId, subject.email.toLowerCase(), subject.cardFingerprint, textArray(binPrefixes(subject.bin)), subject.binCountry ?? ''],
  );
  return row?.blocked === true;
}

interface ScreeningRow {
  tenant_blocks: BlockKind[];
  platform_blocks: BlockKind[];
  subscribed: boolean | null;
  product_found: boolean | null;
  card_count: number | null;
  card_limit: number | null;
  email_count: number | null;
  email_limit: number | null;
  recorded: boolean;
  order_id: string | null;
}

/**
 * Gives back the velocity slot a screening recorded for a submit whose payment was certainly not started: one of the
 * attempts recorded with exactly its card, e-mail, product and time (any one: they count alike).
 */
export async function releaseSubmitAttempt(em: EntityManager, attempt: { tenantId: number; productId: number; email: string; cardFingerprint: string; now: Date }): Promise<void> {
  await em.execute(
    `delete from submit_attempts where id = (
       select id from submit_attempts
        where tenant_id = ? and card_fingerprint = ? and product_id = ? and email = ? and created_at = ?::timestamptz
        limit 1)`,
    [attempt.tenantId, attempt.cardFingerprint, attempt.productId, attempt.email, attempt.now],
  );
}
