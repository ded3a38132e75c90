import type { EntityManager } from '@mikro-orm/postgresql';

export type BlockKind = 'email' | 'card' | 'bin' | 'bin_country';

export interface BlocklistHit {
  readonly kind: BlockKind;
  /** A platform-wide entry rather than the tenant's own. */
  readonly platformWide: boolean;
}

/**
 * The platform's and the tenant's blocklist entries that match the submit's e-mail, card fingerprint, BIN prefix or
 * BIN country. A BIN entry blocks every card starting with it: the card's own prefixes are looked up by equality,
 * so the `(kind, value)` index finds them instead of every BIN entry being compared.
 */
export async function findBlocklistHits(
  em: EntityManager,
  submit: { tenantId: number; email: string; cardFingerprint: string; bin: string; binCountry?: string },
): Promise<BlocklistHit[]> {
  const rows = await em.execute<{ tenant_id: number | null; kind: BlockKind }[]>(
    `select tenant_id, kind from blocklist_entries
      where (tenant_id is null or tenant_id = ?)
        and ((kind = 'email' and value = ?) or (kind = 'card' and value = ?) or (kind = 'bin' and value = any(?::text[])) or (kind = 'bin_country' and value = ?))`,
    [submit.tenantId, submit.email, submit.cardFingerprint, textArray(binPrefixes(submit.bin)), submit.binCountry ?? ''],
  );
  return rows.map((row) => ({ kind: row.kind, platformWide: row.tenant_id === null }));
}

/** The BIN's prefixes of lengths 1 to 8: a blocked BIN of any length is one of them. */
function binPrefixes(bin: string): string[] {
  return Array.from({ length: Math.min(bin.length, 8) }, (_, index) => bin.slice(0, index + 1));
}

/** A PostgreSQL array literal of digit strings (a BIN's prefixes: nothing to quote). */
const textArray = (values: readonly string[]) => `{${values.filter((value) => /^\d+$/.test(value)).join(',')}}`;

/**
 * Serializes the velocity checks of one card (per tenant) and one e-mail (per product) until the calling
 * transaction ends, so that counting recent submits and recording this one is a single step: concurrent
 * submits of a card are counted one after another, and no more than the limit pass. Always card, then
 * e-mail, so two submits never wait on each other's locks.
 */
export async function lockVelocitySubjects(em: EntityManager, submit: { tenantId: number; productId: number; cardFingerprint: string; email: string }): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0)), pg_advisory_xact_lock(hashtextextended(?, 0))`, [
    `velocity/card/${submit.tenantId}/${submit.cardFingerprint}`,
    `velocity/email/${submit.productId}/${submit.email}`,
  ]);
}

export interface RecentSubmits {
  /** Submits with this card in the tenant since `cardSince`. */
  readonly byCard: number;
  /** Submits with this e-mail for the product since `emailSince`. */
  readonly byEmail: number;
}

/** The velocity counts of a submit, in one round trip. */
export async function countRecentSubmits(
  em: EntityManager,
  submit: { tenantId: number; productId: number; cardFingerprint: string; email: string; cardSince: Date; emailSince: Date },
): Promise<RecentSubmits> {
  const [row] = await em.execute<{ card_count: string; email_count: string }[]>(
    `select
       (select count(*) from submit_attempts where tenant_id = ? and card_fingerprint = ? and created_at > ?) as card_count,
       (select count(*) from submit_attempts where product_id = ? and email = ? and created_at > ?) as email_count`,
    [submit.tenantId, submit.cardFingerprint, submit.cardSince, submit.productId, submit.email, submit.emailSince],
  );
  return { byCard: Number(row?.card_count ?? 0), byEmail: Number(row?.email_count ?? 0) };
}

/** Records a submit that passed screening, for later velocity counts. */
export async function recordSubmitAttempt(
  em: EntityManager,
  submit: { tenantId: number; productId: number; cardFingerprint: string; email: string; at: Date },
): Promise<void> {
  await em.execute(`insert into submit_attempts (tenant_id, product_id, card_fingerprint, email, created_at) values (?, ?, ?, ?, ?)`, [
    submit.tenantId,
    submit.productId,
    submit.cardFingerprint,
    submit.email,
    submit.at,
  ]);
}
