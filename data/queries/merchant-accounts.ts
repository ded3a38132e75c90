import type { EntityManager } from '@mikro-orm/postgresql';
import type { CardNetwork } from '../../domain/catalog/product.ts';
import type { MerchantCandidate } from '../../domain/payments/attempts.ts';

interface CandidateRow {
  id: number;
  mid: string;
  gateway: string;
  descriptor: string | null;
  acquiring_bank: string | null;
  mid_portal_url: string | null;
  allow_retries_from_other_mids: boolean;
  allow_insufficient_funds_retries: boolean;
}

export interface EligibilityCriteria {
  readonly tenantId: number;
  readonly amount: string;
  readonly currency: string;
  readonly network: string;
  /** A `mid` named in the request: only this account, whatever its live state, price or cap. */
  readonly forcedMerchantAccountId?: number;
}

/**
 * The tenant's merchant accounts able to take the payment, least used relative to their monthly cap
 * first: live, configured for the currency, accepting the card's network, `maxPrice` covering the amount,
 * and month-to-date approved volume plus this amount within `monthlyCap`.
 */
export async function findEligibleMerchantAccounts(em: EntityManager, criteria: EligibilityCriteria): Promise<MerchantCandidate[]> {
  const forced = criteria.forcedMerchantAccountId ?? null;
  const rows = await em.execute<CandidateRow[]>(
    `with volume as (
       select merchant_account_id, approved_amount as approved from merchant_account_volumes where month = date_trunc('month', now())::date)
     select m.id, m.mid, m.gateway, m.descriptor, m.acquiring_bank, m.mid_portal_url, m.allow_retries_from_other_mids, m.allow_insufficient_funds_retries,
            coalesce(v.approved, 0) / nullif(m.monthly_cap, 0) as usage
       from merchant_accounts m
       join merchant_account_currencies c on c.merchant_account_id = m.id and c.currency = ?
       left join volume v on v.merchant_account_id = m.id
      where m.tenant_id = ?
        and (cast(? as int) is not null and m.id = ?
             or cast(? as int) is null and m.fully_live
                and (m.max_price is null or m.max_price >= cast(? as numeric))
                and (? <> 'NetworkA' or m.enabled_network_a) and (? <> 'NetworkB' or m.enabled_network_b)
                and (m.monthly_cap is null or coalesce(v.approved, 0) + cast(? as numeric) <= m.monthly_cap))
      order by usage asc nulls first, m.id asc`,
    [criteria.currency, criteria.tenantId, forced, forced, forced, criteria.amount, criteria.network, criteria.network, criteria.amount],
  );
  return rows.map(
    (row): MerchantCandidate => ({
      merchantAccountId: row.id,
      mid: row.mid,
      gateway: row.gateway,
      descriptor: row.descriptor ?? '',
      acquiringBank: row.acquiring_bank ?? '',
      midPortalUrl: row.mid_portal_url ?? '',
      allowRetriesFromOtherMids: row.allow_retries_from_other_mids,
      allowInsufficientFundsRetries: row.allow_insufficient_funds_retries,
    }),
  );
}

export interface MerchantAccountByMid {
  readonly id: number;
  readonly tenantId: number;
  /** Networks this account has switched off (the others it accepts). */
  readonly disabledNetworks: readonly CardNetwork[];
}

/** A merchant account by its MID, whichever tenant owns it. */
export async function findMerchantAccountByMid(em: EntityManager, mid: string): Promise<MerchantAccountByMid | undefined> {
  const [row] = await em.execute<{ id: number; tenant_id: number; enabled_network_a: boolean; enabled_network_b: boolean }[]>(
    `select id, tenant_id, enabled_network_a, enabled_network_b from merchant_accounts where mid = ?`,
    [mid],
  );
  if (!row) return undefined;
  const disabledNetworks: CardNetwork[] = [];
  if (!row.enabled_network_a) disabledNetworks.push('NetworkA');
  if (!row.enabled_network_b) disabledNetworks.push('NetworkB');
  return { id: row.id, tenantId: row.tenant_id, disabledNetworks };
}

/** The account's processor credentials for a currency, still sealed by the secret box; undefined when none are configured. */
export async function findSealedCredentials(em: EntityManager, merchantAccountId: number, currency: string): Promise<string | undefined> {
  const [row] = await em.execute<{ credentials_ciphertext: string }[]>(
    `select credentials_ciphertext from merchant_account_currencies where merchant_account_id = ? and currency = ?`,
    [merchantAccountId, currency],
  );
  return row?.credentials_ciphertext;
}

/** Adds an approved amount to the account's volume of the current month (what `monthlyCap` is checked against). */
export async function addApprovedVolume(em: EntityManager, merchantAccountId: number, amount: string): Promise<void> {
  await em.execute(
    `insert into merchant_account_volumes (merchant_account_id, month, approved_amount) values (?, date_trunc('month', now())::date, ?)
     on conflict (merchant_account_id, month) do update set approved_amount = merchant_account_volumes.approved_amount + excluded.approved_amount`,
    [merchantAccountId, amount],
  );
}
