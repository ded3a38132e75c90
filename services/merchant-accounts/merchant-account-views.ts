import type { EntityManager } from '@mikro-orm/postgresql';
import { listVisibleMerchantAccounts, type MerchantAccountFilter, type StoredMerchantAccount } from '../../data/queries/merchant-account-admin.ts';
import { maskCredentials, parseCredentials } from '../../domain/merchant-accounts/credentials.ts';
import type { MerchantAccountView } from '../../domain/merchant-accounts/merchant-account.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';

/** The account as an admin sees it: credentials opened only to be masked. */
export function toView(stored: StoredMerchantAccount, secretBox: SecretBox): MerchantAccountView {
  return {
    ...stored.view,
    currencies: stored.currencies.map(({ currency, sealedCredentials }) => ({
      currency,
      gatewayCredentials: maskCredentials(parseCredentials(secretBox.open(sealedCredentials))),
    })),
  };
}

/** The merchant accounts of the tenant and its child companies (spec 4.7), by id. */
export async function listMerchantAccounts(em: EntityManager, secretBox: SecretBox, tenantId: number, filter: MerchantAccountFilter = {}): Promise<MerchantAccountView[]> {
  return (await listVisibleMerchantAccounts(em, tenantId, filter)).map((stored) => toView(stored, secretBox));
}
