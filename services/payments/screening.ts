import type { EntityManager } from '@mikro-orm/postgresql';
import type { CardNetwork } from '../../domain/catalog/product.ts';
import type { SubmitInfo } from '../../domain/payments/submit-result.ts';

export interface ScreeningInput {
  readonly tenantId: number;
  readonly productId: number;
  readonly email: string;
  readonly cardFingerprint: string;
  readonly bin: string;
  readonly binCountry?: string;
  readonly network: CardNetwork;
  readonly mid?: string;
  readonly velocity: { readonly cardSubmitLimit: number; readonly cardSubmitWindowSeconds: number; readonly emailSubmitLimit: number };
  readonly hasSubscriptionPlan: boolean;
}

export type Screening = { readonly ok: true; readonly forcedMerchantAccountId?: number } | { readonly ok: false; readonly info: SubmitInfo; readonly error: string };

/** E-mail velocity counts submits of the last 24 hours for the product. */
const EMAIL_WINDOW_SECONDS = 24 * 60 * 60;

/**
 * The database checks of a submit, after validation and before any money moves: the `mid` override,
 * platform and tenant blocklists, an existing subscription, and velocity limits. A submit that passes
 * is recorded for later velocity checks.
 */
export async function screenSubmit(em: EntityManager, input: ScreeningInput, now = new Date()): Promise<Screening> {
    let forcedMerchantAccountId: number | undefined;
  if (input.mid !== undefined && input.mid !== '') {
    const [account] = await em.execute<{ id: number; tenant_id: number; enabled_network_a: boolean; enabled_network_b: boolean }[]>(
      `select id, tenant_id, enabled_network_a, enabled_network_b from merchant_accounts where mid = ?`,
      [input.mid],
    );
    if (!account) return { ok: false, info: 'Failed', error: 'Specified Mid not found' };
    if (account.tenant_id !== input.tenantId) return { ok: false, info: 'Failed', error: 'Specified Mid does not belong to Tenant account' };
    if ((input.network === 'NetworkA' && !account.enabled_network_a) || (input.network === 'NetworkB' && !account.enabled_network_b)) {
      return { ok: false, info: 'Failed', error: `${input.network} cards not supported` };
    }
    forcedMerchantAccountId = account.id;
  }

  const blocks = await em.execute<{ tenant_id: number | null; kind: string }[]>(
    `select tenant_id, kind from blocklist_entries
      where (tenant_id is null or tenant_id = ?)
        and ((kind = 'email' and value = ?) or (kind = 'card' and value = ?) or (kind = 'bin' and ? like value || '%') or (kind = 'bin_country' and value = ?))`,
    [input.tenantId, input.email, input.cardFingerprint, input.bin, input.binCountry ?? ''],
  );
  if (blocks.some((block) => block.tenant_id === null)) return { ok: false, info: 'Failed', error: 'Blocked' };
  if (blocks.some((block) => block.kind !== 'bin_country')) return { ok: false, info: 'UserBlocked', error: 'Blocked' };
  if (blocks.length > 0) return { ok: false, info: 'UserBlocked', error: 'Blocked card' };

  if (input.hasSubscriptionPlan) {
    const [subscribed] = await em.execute(
      `select 1 from subscriptions where tenant_id = ? and product_id = ? and email = ? and state in ('active', 'grace') limit 1`,
      [input.tenantId, input.productId, input.email],
    );
    if (subscribed) return { ok: false, info: 'AlreadySubscribed', error: 'Already subscribed' };
  }

  const [counts] = await em.execute<{ card_count: string; email_count: string }[]>(
    `select
       (select count(*) from submit_attempts where tenant_id = ? and card_fingerprint = ? and created_at > ?) as card_count,
       (select count(*) from submit_attempts where product_id = ? and email = ? and created_at > ?) as email_count`,
    [
      input.tenantId,
      input.cardFingerprint,
      new Date(now.getTime() - input.velocity.cardSubmitWindowSeconds * 1000),
      input.productId,
      input.email,
      new Date(now.getTime() - EMAIL_WINDOW_SECONDS * 1000),
    ],
  );
  if (Number(counts?.card_count ?? 0) >= input.velocity.cardSubmitLimit) return { ok: false, info: 'LimitReached', error: 'CC entered too many times in quick succession' };
  if (Number(counts?.email_count ?? 0) >= input.velocity.emailSubmitLimit) return { ok: false, info: 'LimitReached', error: 'Email entered too many times for this product' };

  await em.execute(`insert into submit_attempts (tenant_id, product_id, card_fingerprint, email, created_at) values (?, ?, ?, ?, ?)`, [
    input.tenantId,
    input.productId,
    input.cardFingerprint,
    input.email,
    now,
  ]);
  return { ok: true, forcedMerchantAccountId };
}
