import type { EntityManager } from '@mikro-orm/postgresql';
import { gatewayIdOf } from '../../domain/merchant-accounts/gateways.ts';
import type { MerchantAccountView, ResolvedName, StoredValue, WritableField } from '../../domain/merchant-accounts/merchant-account.ts';

/** Column of each writable field and resolved name of spec 2.6. */
const COLUMNS = {
  title: 'title',
  agent: 'agent',
  acquiringBank: 'acquiring_bank',
  enabledNetworkB: 'enabled_network_b',
  enabledNetworkA: 'enabled_network_a',
  descriptor: 'descriptor',
  mcc: 'mcc',
  acquirerBINNetworkA: 'acquirer_bin_network_a',
  acquirerBINNetworkB: 'acquirer_bin_network_b',
  psp: 'psp',
  maxPrice: 'max_price',
  verticalId: 'vertical_id',
  monthlyCap: 'monthly_cap',
  reservePercentage: 'reserve_percentage',
  discountRatePercentage: 'discount_rate_percentage',
  gatewayTransactionFee: 'gateway_transaction_fee',
  chargebackFee: 'chargeback_fee',
  routingNumber: 'routing_number',
  accountNumber: 'account_number',
  brandId: 'brand_id',
  allowPremiumProgram: 'allow_premium_program',
  fullyLive: 'fully_live',
  shorthandSuffix: 'shorthand_suffix',
  defaultCurrency: 'default_currency',
  rdrFee: 'rdr_fee',
  alertFee: 'alert_fee',
  cdrnFee: 'cdrn_fee',
  allowRetriesFromOtherMids: 'allow_retries_from_other_mids',
  allowInsufficientFundsRetries: 'allow_insufficient_funds_retries',
  capLimited: 'cap_limited',
  forceAllowRefunds: 'force_allow_refunds',
  dynamicDescriptorEnabled: 'dynamic_descriptor_enabled',
  dynamicDescriptorPrefix: 'dynamic_descriptor_prefix',
  dynamicDescriptorPrefix_NetworkB: 'dynamic_descriptor_prefix_network_b',
  dynamicDescriptorFormat: 'dynamic_descriptor_format',
  bankAuthFee: 'bank_auth_fee',
  bankDeclineFee: 'bank_decline_fee',
  bankAVSFee: 'bank_avs_fee',
  customFee: 'custom_fee',
  customFeeApprovedOnly: 'custom_fee_approved_only',
  notes: 'notes',
  caid: 'caid',
  chargebackMitigationProviderId: 'chargeback_mitigation_provider_id',
  chargebackMitigationNotes: 'chargeback_mitigation_notes',
  processorPortalAccessId: 'processor_portal_access_id',
  merchantDefinedField1: 'merchant_defined_field1',
  merchantDefinedField2: 'merchant_defined_field2',
  merchantDefinedField3: 'merchant_defined_field3',
  customField1: 'custom_field1',
  customField2: 'custom_field2',
  customField3: 'custom_field3',
  midOwnerId: 'mid_owner_id',
  requiresZip: 'requires_zip',
  partnerStoreId: 'partner_store_id',
  vertical: 'vertical',
  brand: 'brand',
  chargebackMitigationProvider: 'chargeback_mitigation_provider',
  processorPortalAccess: 'processor_portal_access',
} as const satisfies Record<WritableField | ResolvedName, string>;

const MONEY = new Set(['max_price', 'gateway_transaction_fee', 'chargeback_fee', 'rdr_fee', 'alert_fee', 'cdrn_fee', 'bank_auth_fee', 'bank_decline_fee', 'bank_avs_fee', 'custom_fee', 'custom_fee_approved_only', 'reserve_percentage', 'discount_rate_percentage']);

/** A merchant account with its currencies' credentials still sealed (the service opens and masks them). */
export interface StoredMerchantAccount {
  readonly tenantId: number;
  readonly view: Omit<MerchantAccountView, 'currencies'>;
  readonly currencies: { currency: string; sealedCredentials: string }[];
}

type Row = Record<string, unknown> & {
  id: number;
  tenant_id: number;
  mid: string;
  gateway: string;
  row_version: number;
  company: string;
  parent_tenant_id: number | null;
  parent_company: string | null;
  cap_limited: Date | string | null;
  currencies: { currency: string; sealed: string }[] | string;
};

/** The tenant itself and its child companies: whose merchant accounts an admin of the tenant sees. */
const VISIBLE_TENANTS = `(select vt.id from tenants vt where vt.id = ? or vt.parent_tenant_id = ?)`;

const SELECT = `select m.*, t.name as company, t.parent_tenant_id, coalesce(pt.name, t.parent_company_name) as parent_company,
       coalesce((select json_agg(json_build_object('currency', c.currency, 'sealed', c.credentials_ciphertext) order by c.currency)
                   from merchant_account_currencies c where c.merchant_account_id = m.id), '[]'::json) as currencies
  from merchant_accounts m
  join tenants t on t.id = m.tenant_id
  left join tenants pt on pt.id = t.parent_tenant_id`;

export interface MerchantAccountFilter {
  readonly live?: boolean;
  readonly brandId?: number;
  readonly gateway?: string;
  readonly currency?: string;
}

/** The merchant accounts of the tenant and its child companies, by id. */
export async function listVisibleMerchantAccounts(em: EntityManager, tenantId: number, filter: MerchantAccountFilter = {}): Promise<StoredMerchantAccount[]> {
  const conditions = [`m.tenant_id in ${VISIBLE_TENANTS}`];
  const params: unknown[] = [tenantId, tenantId];
  if (filter.live !== undefined) (conditions.push('m.fully_live = ?'), params.push(filter.live));
  if (filter.brandId !== undefined) (conditions.push('m.brand_id = ?'), params.push(filter.brandId));
  if (filter.gateway !== undefined) (conditions.push('m.gateway = ?'), params.push(filter.gateway));
  if (filter.currency !== undefined) {
    conditions.push('exists (select 1 from merchant_account_currencies fc where fc.merchant_account_id = m.id and fc.currency = ?)');
    params.push(filter.currency);
  }
  const rows = await em.execute<Row[]>(`${SELECT} where ${conditions.join(' and ')} order by m.id`, params);
  return rows.map(toStored);
}

/** One merchant account the tenant may administer; undefined when it does not exist or belongs to someone else. */
export async function findVisibleMerchantAccount(em: EntityManager, tenantId: number, id: number): Promise<StoredMerchantAccount | undefined> {
  const [row] = await em.execute<Row[]>(`${SELECT} where m.id = ? and m.tenant_id in ${VISIBLE_TENANTS}`, [id, tenantId, tenantId]);
  return row && toStored(row);
}

/** Several merchant accounts the tenant may administer, by id (one statement; unknown or foreign ids are left out). */
export async function findVisibleMerchantAccounts(em: EntityManager, tenantId: number, ids: readonly number[]): Promise<StoredMerchantAccount[]> {
  const rows = await em.execute<Row[]>(`${SELECT} where m.id = any(cast(? as int[])) and m.tenant_id in ${VISIBLE_TENANTS}`, [
    `{${ids.map((id) => Math.trunc(id)).join(',')}}`,
    tenantId,
    tenantId,
  ]);
  return rows.map(toStored);
}

/**
 * The name that accounts of these tenants already carry for a reference id (a brand, vertical, mitigation provider or
 * portal access method); names are reference data provisioning writes beside the id, so a new id takes its known name.
 */
export async function findReferenceName(em: EntityManager, tenantId: number, name: ResolvedName, idField: WritableField, id: number): Promise<string | null> {
  const [row] = await em.execute<{ name: string }[]>(
    `select m.${COLUMNS[name]} as name from merchant_accounts m
      where m.${COLUMNS[idField]} = ? and m.${COLUMNS[name]} is not null and m.tenant_id in ${VISIBLE_TENANTS}
      order by m.id limit 1`,
    [id, tenantId, tenantId],
  );
  return row?.name ?? null;
}

/**
 * Writes the values and increments `row_version` in one statement that applies only while the row still has the
 * version the caller read: two concurrent updates of one version cannot both succeed. False when it did not apply.
 */
export async function updateMerchantAccountAtVersion(
  em: EntityManager,
  target: { tenantId: number; id: number; rowVersion: number },
  values: ReadonlyMap<WritableField | ResolvedName, StoredValue>,
): Promise<boolean> {
  const assignments = [...values.keys()].map((field) => {
    const column = COLUMNS[field];
    return MONEY.has(column) ? `${column} = cast(? as numeric)` : column === 'cap_limited' ? `${column} = cast(? as timestamptz)` : `${column} = ?`;
  });
  const rows = await em.execute<{ id: number }[]>(
    `update merchant_accounts set ${[...assignments, 'row_version = row_version + 1', 'updated_at = now()'].join(', ')}
      where id = ? and row_version = ? and tenant_id in ${VISIBLE_TENANTS}
      returning id`,
    [...values.values(), target.id, target.rowVersion, target.tenantId, target.tenantId],
  );
  return rows.length === 1;
}

/** Makes the account's currencies exactly these, with their sealed credentials. */
export async function replaceMerchantAccountCurrencies(em: EntityManager, merchantAccountId: number, currencies: readonly { currency: string; sealedCredentials: string }[]): Promise<void> {
  await em.execute(`delete from merchant_account_currencies where merchant_account_id = ? and currency <> all(cast(? as text[]))`, [
    merchantAccountId,
    `{${currencies.map((c) => c.currency).join(',')}}`,
  ]);
  for (const { currency, sealedCredentials } of currencies) {
    await em.execute(
      `insert into merchant_account_currencies (merchant_account_id, currency, credentials_ciphertext) values (?, ?, ?)
       on conflict (merchant_account_id, currency) do update set credentials_ciphertext = excluded.credentials_ciphertext`,
      [merchantAccountId, currency, sealedCredentials],
    );
  }
}

export interface MerchantAccountAuditEntry {
  readonly id: string;
  readonly merchantAccountId: number;
  readonly actor: string;
  readonly action: string;
  readonly changes: Record<string, unknown>;
  readonly createdAt: Date;
}

/**
 * Changes to merchant accounts the tenant may administer, newest first; `before` is an entry id to read on from.
 * Read through the accounts (so a child company's history is its parent's to read).
 */
export async function listMerchantAccountAudit(
  em: EntityManager,
  query: { tenantId: number; merchantAccountId?: number; limit: number; before?: string },
): Promise<MerchantAccountAuditEntry[]> {
  const conditions = [`a.entity_type = 'MerchantAccount'`, `a.tenant_id in ${VISIBLE_TENANTS}`];
  const params: unknown[] = [query.tenantId, query.tenantId];
  if (query.merchantAccountId !== undefined) (conditions.push('a.entity_id = ?'), params.push(String(query.merchantAccountId)));
  if (query.before !== undefined) (conditions.push('a.id < cast(? as bigint)'), params.push(query.before));
  const rows = await em.execute<{ id: string; entity_id: string; actor: string; action: string; changes: Record<string, unknown> | null; created_at: Date }[]>(
    `select a.id::text as id, a.entity_id, a.actor, a.action, a.changes, a.created_at from audit_entries a
      where ${conditions.join(' and ')} order by a.id desc limit ?`,
    [...params, query.limit],
  );
  return rows.map((row) => ({ id: row.id, merchantAccountId: Number(row.entity_id), actor: row.actor, action: row.action, changes: row.changes ?? {}, createdAt: new Date(row.created_at) }));
}

const number = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

function toStored(row: Row): StoredMerchantAccount {
  const currencies = (typeof row.currencies === 'string' ? JSON.parse(row.currencies) : row.currencies) as { currency: string; sealed: string }[];
  const view: Omit<MerchantAccountView, 'currencies'> = {
    id: row.id,
    mid: row.mid,
    title: String(row.title),
    companyId: row.tenant_id,
    agent: text(row.agent),
    acquiringBank: text(row.acquiring_bank),
    gatewayId: gatewayIdOf(row.gateway, number(row.gateway_id)),
    enabledNetworkB: row.enabled_network_b === true,
    enabledNetworkA: row.enabled_network_a === true,
    descriptor: text(row.descriptor),
    mcc: text(row.mcc),
    acquirerBINNetworkA: text(row.acquirer_bin_network_a),
    acquirerBINNetworkB: text(row.acquirer_bin_network_b),
    psp: text(row.psp),
    maxPrice: number(row.max_price),
    verticalId: number(row.vertical_id),
    monthlyCap: number(row.monthly_cap),
    reservePercentage: number(row.reserve_percentage),
    discountRatePercentage: number(row.discount_rate_percentage),
    gatewayTransactionFee: number(row.gateway_transaction_fee),
    chargebackFee: number(row.chargeback_fee),
    routingNumber: text(row.routing_number),
    accountNumber: text(row.account_number),
    brandId: number(row.brand_id),
    allowPremiumProgram: row.allow_premium_program === true,
    fullyLive: row.fully_live === true,
    shorthandSuffix: text(row.shorthand_suffix),
    defaultCurrency: String(row.default_currency),
    rdrFee: number(row.rdr_fee),
    alertFee: number(row.alert_fee),
    cdrnFee: number(row.cdrn_fee),
    allowRetriesFromOtherMids: row.allow_retries_from_other_mids === true,
    allowInsufficientFundsRetries: row.allow_insufficient_funds_retries === true,
    capLimited: row.cap_limited === null ? null : new Date(row.cap_limited).toISOString(),
    forceAllowRefunds: row.force_allow_refunds === true,
    dynamicDescriptorEnabled: row.dynamic_descriptor_enabled === true,
    dynamicDescriptorPrefix: text(row.dynamic_descriptor_prefix),
    dynamicDescriptorPrefix_NetworkB: text(row.dynamic_descriptor_prefix_network_b),
    dynamicDescriptorFormat: number(row.dynamic_descriptor_format),
    bankAuthFee: number(row.bank_auth_fee),
    bankDeclineFee: number(row.bank_decline_fee),
    bankAVSFee: number(row.bank_avs_fee),
    customFee: number(row.custom_fee),
    customFeeApprovedOnly: number(row.custom_fee_approved_only),
    notes: text(row.notes),
    caid: text(row.caid),
    chargebackMitigationProviderId: number(row.chargeback_mitigation_provider_id),
    chargebackMitigationNotes: text(row.chargeback_mitigation_notes),
    processorPortalAccessId: number(row.processor_portal_access_id),
    rowVersion: row.row_version,
    merchantDefinedField1: text(row.merchant_defined_field1),
    merchantDefinedField2: text(row.merchant_defined_field2),
    merchantDefinedField3: text(row.merchant_defined_field3),
    customField1: text(row.custom_field1),
    customField2: text(row.custom_field2),
    customField3: text(row.custom_field3),
    midOwnerId: Number(row.mid_owner_id),
    company: row.company,
    gateway: row.gateway,
    vertical: text(row.vertical),
    brand: text(row.brand),
    chargebackMitigationProvider: text(row.chargeback_mitigation_provider),
    processorPortalAccess: text(row.processor_portal_access),
    parentCompany: row.parent_company,
    parentCompanyId: row.parent_tenant_id,
    requiresZip: row.requires_zip === true,
    partnerStoreId: text(row.partner_store_id),
  };
  return { tenantId: row.tenant_id, view, currencies: currencies.map((c) => ({ currency: c.currency, sealedCredentials: c.sealed })) };
}
