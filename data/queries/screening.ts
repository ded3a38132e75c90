import type { EntityManager } from '@mikro-orm/postgresql';

export type BlockKind = 'email' | 'card' | 'bin' | 'bin_country';

export interface BlocklistHit {
  readonly kind: BlockKind;
  /** A platform-wide entry rather than the tenant's own. */
  readonly platformWide: boolean;
}

/** The platform's and the tenant's blocklist entries that match the submit's e-mail, card fingerprint, BIN prefix or BIN country. */
export async function findBlocklistHits(
  em: EntityManager,
  submit: { tenantId: number; email: string; cardFingerprint: string; bin: string; binCountry?: string },
): Promise<BlocklistHit[]> {
  const rows = await em.execute<{ tenant_id: number | null; kind: BlockKind }[]>(
    `select tenant_id, kind from blocklist_entries
      where (tenant_id is null or tenant_id = ?)
        and ((kind = 'email' and value = ?) or (kind = 'card' and value = ?) or (kind = 'bin' and ? like value || '%') or (kind = 'bin_country' and value = ?))`,
    [submit.tenantId, submit.email, submit.cardFingerprint, submit.bin, submit.binCountry ?? ''],
  );
  return rows.map((row) => ({ kind: row.kind, platformWide: row.tenant_id === null }));
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
