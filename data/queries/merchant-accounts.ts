import type { EntityManager } from '@mikro-orm/postgresql';
import type { SqlExecutor } from '../sql-executor.ts';
import type { MerchantCandidate } from '../../domain/payments/attempts.ts';
import type { ForcedAccountFit } from '../../domain/payments/forced-merchant-account.ts';

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
  /** Accounts an earlier attempt of the payment used: a cascade goes elsewhere. */
  readonly excludedMerchantAccountIds?: readonly number[];
}

const CANDIDATE_COLUMNS = `m.id, m.mid, m.gateway, m.descriptor, m.acquiring_bank, m.mid_portal_url, m.allow_retries_from_other_mids, m.allow_insufficient_funds_retries`;
const THIS_MONTH = `date_trunc('month', now())::date`;

/**
 * Whether merchant account `m` takes the card network bound twice after it: the `enabledNetworkA/B` flags govern those
 * two networks; the others are the product's to accept. One predicate for selection, the forced account and refusals.
 */
const TAKES_NETWORK = `((? <> 'NetworkA' or m.enabled_network_a) and (? <> 'NetworkB' or m.enabled_network_b))`;

/**
 * The tenant's merchant accounts able to take the payment, least used relative to their monthly cap
 * first: live, configured for the currency, accepting the card's network, `maxPrice` covering the amount,
 * and month-to-date approved plus reserved volume in the payment's currency plus this amount within `monthlyCap`
 * (caps and `maxPrice` are in the payment's currency: volumes are kept per currency). A hint only:
 * `reserveMonthlyVolume` is what holds the cap.
 */
export async function findEligibleMerchantAccounts(sql: SqlExecutor, criteria: EligibilityCriteria): Promise<MerchantCandidate[]> {
  const rows = await sql.execute<CandidateRow[]>(
    `select ${CANDIDATE_COLUMNS},
            (coalesce(v.approved_amount, 0) + coalesce(v.reserved_amount, 0)) / nullif(m.monthly_cap, 0) as usage
       from merchant_accounts m
       join merchant_account_currencies c on c.merchant_account_id = m.id and c.currency = ?
       left join merchant_account_volumes v on v.merchant_account_id = m.id and v.month = ${THIS_MONTH} and v.currency = c.currency
      where m.tenant_id = ? and m.fully_live and m.id <> all(?::int[])
        and (m.max_price is null or m.max_price >= cast(? as numeric))
        and ${TAKES_NETWORK}
        and (m.monthly_cap is null or coalesce(v.approved_amount, 0) + coalesce(v.reserved_amount, 0) + cast(? as numeric) <= m.monthly_cap)
      order by usage asc nulls first, m.id asc`,
    [criteria.currency, criteria.tenantId, intArray(criteria.excludedMerchantAccountIds ?? []), criteria.amount, criteria.network, criteria.network, criteria.amount],
  );
  return rows.map(toCandidate);
}

/**
 * Whether the tenant has live merchant accounts for the currency and none of them takes the card's network: the
 * payment then fails as spec 7.1's "… cards not supported" rather than as no account having room. Asked only when
 * selection found no account, so never on the path of a payment that has one.
 */
export async function liveAccountsRefuseNetwork(sql: SqlExecutor, criteria: { tenantId: number; currency: string; network: string }): Promise<boolean> {
  const [row] = await sql.execute<{ refused: boolean }[]>(
    `select count(*) > 0 and not bool_or(${TAKES_NETWORK}) as refused
       from merchant_accounts m join merchant_account_currencies c on c.merchant_account_id = m.id and c.currency = ?
      where m.tenant_id = ? and m.fully_live`,
    [criteria.network, criteria.network, criteria.currency, criteria.tenantId],
  );
  return row?.refused === true;
}

/** A `mid` named in the request, with how it fits the payment (each fact false is a reason to decline it). */
export interface ForcedMerchantAccount {
  readonly candidate: MerchantCandidate;
  readonly fit: ForcedAccountFit;
}

/** The forced account with the eligibility facts of selection; undefined when it is not the tenant's. */
export async function findForcedMerchantAccount(
  em: EntityManager,
  criteria: { tenantId: number; merchantAccountId: number; amount: string; currency: string; network: string },
): Promise<ForcedMerchantAccount | undefined> {
  const [row] = await em.execute<(CandidateRow & { fully_live: boolean; covers_amount: boolean; currency_configured: boolean; accepts_network: boolean })[]>(
    `select ${CANDIDATE_COLUMNS}, m.fully_live,
            (m.max_price is null or m.max_price >= cast(? as numeric)) as covers_amount,
            exists (select 1 from merchant_account_currencies c where c.merchant_account_id = m.id and c.currency = ?) as currency_configured,
            ${TAKES_NETWORK} as accepts_network
       from merchant_accounts m
      where m.id = ? and m.tenant_id = ?`,
    [criteria.amount, criteria.currency, criteria.network, criteria.network, criteria.merchantAccountId, criteria.tenantId],
  );
  if (!row) return undefined;
  return {
    candidate: toCandidate(row),
    fit: { fullyLive: row.fully_live, coversAmount: row.covers_amount, currencyConfigured: row.currency_configured, acceptsNetwork: row.accepts_network },
  };
}

/** The account holding the order's cap reservation, if it holds one (a replayed selection finds its own). */
export async function findReservedMerchantAccount(em: EntityManager, orderId: number): Promise<MerchantCandidate | undefined> {
  const [row] = await em.execute<CandidateRow[]>(
    `select ${CANDIDATE_COLUMNS} from orders o join merchant_accounts m on m.id = o.cap_reservation_id where o.id = ?`,
    [orderId],
  );
  return row && toCandidate(row);
}

/** The account an attempt (by its reference) was recorded on, if it was recorded. */
export async function findAttemptMerchantAccount(em: EntityManager, reference: string): Promise<MerchantCandidate | undefined> {
  const [row] = await em.execute<CandidateRow[]>(
    `select ${CANDIDATE_COLUMNS} from transactions t join merchant_accounts m on m.id = t.merchant_account_id where t.reference = ?`,
    [reference],
  );
  return row && toCandidate(row);
}

/**
 * Reserves the order's amount on the account's volume of this month in the order's currency, within `monthlyCap`, for
 * the attempt of `reference` (`routines.reserve_volume`, migration 000021, one round trip): one conditional update, so concurrent
 * payments on one MID are serialized by its volume row and never pass the cap together. The order records the
 * reservation; an order that already holds one reserves nothing more. True when the order holds a reservation on
 * this account, made now or by a run of the same step that committed first: the order's row is locked before
 * anything else, so two runs of one payment's step (one timed out, still running) wait for each other instead of
 * reserving twice or one of them finding no account. False, whatever the cap, for a closed order or an attempt
 * already recorded: a late run must not send that attempt to another account.
 */
export async function reserveMonthlyVolume(sql: SqlExecutor, reservation: { orderId: number; merchantAccountId: number; reference: string }): Promise<boolean> {
  const [row] = await sql.execute<{ reserved: boolean }[]>(`select routines.reserve_volume(?::int, ?::int, ?::text) as reserved`, [
    reservation.orderId,
    reservation.merchantAccountId,
    reservation.reference,
  ]);
  return row?.reserved === true;
}

/**
 * Releases the order's reservation, once (the order forgets it in the same statement): on a decline, void or
 * expiry, and on approval just before the amount is counted as approved. With a merchant
 * account, only a reservation on that account is released.
 */
export async function releaseMonthlyVolume(em: EntityManager, release: { orderId: number; merchantAccountId?: number }): Promise<void> {
  await em.execute(
    `with released as (
       update orders o set cap_reservation_id = null, cap_reservation_month = null
         from orders previous
        where o.id = ? and previous.id = o.id and o.cap_reservation_id = coalesce(cast(? as int), o.cap_reservation_id)
        returning previous.cap_reservation_id as merchant_account_id, previous.cap_reservation_month as month, o.amount, o.currency)
     update merchant_account_volumes v set reserved_amount = v.reserved_amount - r.amount
       from released r
      where v.merchant_account_id = r.merchant_account_id and v.month = r.month and v.currency = r.currency`,
    [release.orderId, release.merchantAccountId ?? null],
  );
}

/**
 * Gives back the room an approved authorization took on its merchant account's monthly volume, once it charged
 * nothing (voided, or released by the processor): in the month and currency it was counted in, once however often
 * it runs, since the row forgets that month in the same statement (a second run waits for the first's lock, then
 * finds nothing left to give). Never below zero: an approval recorded before its row kept the month (migration 027)
 * has the month it was sent in, which at the turn of a month may not be the month it was counted in.
 */
export async function releaseApprovedVolume(sql: SqlExecutor, release: { orderId: number; transactionId: string }): Promise<void> {
  await sql.execute(
    // The month released is the one the locked row holds (as `closeSubmitOrder` reads its reservation).
    `with counted as (select id, merchant_account_id, volume_month, amount, currency from transactions where id = ? and order_id = ? and volume_month is not null for update),
     released as (
       update transactions t set volume_month = null
         from counted c
        where t.id = c.id
        returning c.merchant_account_id, c.volume_month, c.amount, c.currency)
     update merchant_account_volumes v set approved_amount = greatest(v.approved_amount - r.amount, 0)
       from released r
      where v.merchant_account_id = r.merchant_account_id and v.month = r.volume_month and v.currency = r.currency`,
    [release.transactionId, release.orderId],
  );
}

export interface MerchantAccountByMid {
  readonly id: number;
  readonly tenantId: number;
}

/** A merchant account by its MID, whichever tenant owns it. */
export async function findMerchantAccountByMid(em: EntityManager, mid: string): Promise<MerchantAccountByMid | undefined> {
  const [row] = await em.execute<{ id: number; tenant_id: number }[]>(`select id, tenant_id from merchant_accounts where mid = ?`, [mid]);
  return row && { id: row.id, tenantId: row.tenant_id };
}

/** The account's processor credentials for a currency, still sealed by the secret box; undefined when none are configured. */
export async function findSealedCredentials(sql: SqlExecutor, merchantAccountId: number, currency: string): Promise<string | undefined> {
  const [row] = await sql.execute<{ credentials_ciphertext: string }[]>(
    `select credentials_ciphertext from merchant_account_currencies where merchant_account_id = ? and currency = ?`,
    [merchantAccountId, currency],
  );
  return row?.credentials_ciphertext;
}

function toCandidate(row: CandidateRow): MerchantCandidate {
  return {
    merchantAccountId: row.id,
    mid: row.mid,
    gateway: row.gateway,
    descriptor: row.descriptor ?? '',
    acquiringBank: row.acquiring_bank ?? '',
    midPortalUrl: row.mid_portal_url ?? '',
    allowRetriesFromOtherMids: row.allow_retries_from_other_mids,
    allowInsufficientFundsRetries: row.allow_insufficient_funds_retries,
  };
}

/** A PostgreSQL array literal of integers (ids only, so nothing to escape). */
const intArray = (ids: readonly number[]) => `{${ids.map((id) => Math.trunc(id)).join(',')}}`;

/** The processors a tenant's merchant accounts name (disabled ones too): where an attempt of its orders may have gone. */
export async function listTenantGateways(em: EntityManager, tenantId: number): Promise<string[]> {
  const rows = await em.execute<{ gateway: string }[]>(`select distinct gateway from merchant_accounts where tenant_id = ? order by gateway`, [tenantId]);
  return rows.map((row) => row.gateway);
}
