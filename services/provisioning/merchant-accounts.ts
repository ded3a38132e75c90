import type { EntityManager } from '@mikro-orm/postgresql';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { givenCredentials, maskedForAudit } from '../../domain/merchant-accounts/credentials.ts';
import { toFractionString, toMoneyString } from '../../domain/money.ts';
import { MerchantAccount, MerchantAccountCurrency } from '../../schema/entities/index.ts';
import type { MerchantAccountProvisionInput } from '../../schema/inputs/merchant-account.input.ts';
import { assignChanges, type ChangeKind } from './changes.ts';
import type { TenantScope } from './tenant-scope.ts';

/**
 * Merchant accounts matched by MID (unique across tenants); currencies and their gateway credentials
 * (stored sealed) become exactly the fixture's when it lists them.
 */
export async function provisionMerchantAccounts(
  { em, tenant, audit }: TenantScope,
  secretBox: SecretBox,
  fixtures: readonly MerchantAccountProvisionInput[],
): Promise<{ mid: string; id: number; change: ChangeKind }[]> {
  const results: { mid: string; id: number; change: ChangeKind }[] = [];
  for (const fixture of fixtures) {
    const existing = await em.findOne(MerchantAccount, { mid: fixture.mid }, { populate: ['tenant'] });
    if (existing && existing.tenant.id !== tenant.id) {
      throw new DomainError('conflict', `MID ${fixture.mid} belongs to another tenant`, { field: 'mid' });
    }
    const { currencies, ...fields } = fixture;
    const values = merchantAccountValues(fields);
    let account = existing;
    let change: ChangeKind;
    if (!account) {
      account = em.create(MerchantAccount, { tenant, mid: fixture.mid, gateway: 'sandbox', ...values } as never);
      change = 'created';
    } else {
      change = assignChanges(account, values);
    }
    await em.flush();
    if (currencies) {
      const currencyChange = await syncCurrencies(em, secretBox, account, currencies, change === 'created');
      if (change === 'unchanged' && currencyChange) change = 'updated';
    }
    if (change !== 'unchanged') audit(`merchant_account.${change}`, 'MerchantAccount', account.id, { ...maskedForAudit(values), currencies: currencies?.map((c) => c.currency) });
    results.push({ mid: account.mid, id: account.id, change });
  }
  return results;
}

type AccountFields = Omit<MerchantAccountProvisionInput, 'mid' | 'currencies'>;

const MONEY_FIELDS = ['maxPrice', 'gatewayTransactionFee', 'chargebackFee', 'rdrFee', 'alertFee', 'cdrnFee', 'bankAuthFee', 'bankDeclineFee', 'bankAVSFee', 'customFee', 'customFeeApprovedOnly'] as const;
const FRACTION_FIELDS = ['reservePercentage', 'discountRatePercentage'] as const;

/** Maps API field names and formats to the entity: exact decimals as strings, dates as Date. */
function merchantAccountValues(fields: Partial<AccountFields>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const property = key === 'dynamicDescriptorPrefix_NetworkB' ? 'dynamicDescriptorPrefixNetworkB' : key;
    if (value === null) values[property] = null;
    else if ((MONEY_FIELDS as readonly string[]).includes(key)) values[property] = toMoneyString(value as number | string, key);
    else if ((FRACTION_FIELDS as readonly string[]).includes(key)) values[property] = toFractionString(value as number | string, key);
    else if (key === 'capLimited') values[property] = new Date(value as string);
    else values[property] = value;
  }
  return values;
}

/** Returns whether any currency row was added, removed or given other credentials. */
async function syncCurrencies(
  em: EntityManager,
  secretBox: SecretBox,
  account: MerchantAccount,
  currencies: NonNullable<MerchantAccountProvisionInput['currencies']>,
  created: boolean,
): Promise<boolean> {
  let changed = false;
  const current = await em.find(MerchantAccountCurrency, { merchantAccount: account });
  const wanted = new Map(currencies.map((c) => [c.currency, c]));
  for (const row of current) {
    if (!wanted.has(row.currency)) {
      em.remove(row);
      changed = true;
    }
  }
  for (const [currency, input] of wanted) {
    const credentials = JSON.stringify(givenCredentials(input.gatewayCredentials ?? {}));
    const row = current.find((r) => r.currency === currency);
    if (!row) {
      em.create(MerchantAccountCurrency, { merchantAccount: account, currency, credentialsCiphertext: secretBox.seal(credentials) });
      changed = true;
    } else if (secretBox.open(row.credentialsCiphertext) !== credentials) {
      row.credentialsCiphertext = secretBox.seal(credentials);
      changed = true;
    }
  }
  // A new version of an account that existed, as for any change of its own fields: an admin update read before this
  // one (its rowVersion) must not write the masks it read over the credentials provisioned here.
  if (changed && !created) account.updatedAt = new Date();
  await em.flush();
  return changed;
}
