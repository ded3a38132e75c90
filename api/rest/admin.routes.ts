import { Type } from '@sinclair/typebox';
import { DomainError } from '../../domain/errors.ts';
import { listMerchantAccounts } from '../../services/merchant-accounts/merchant-account-views.ts';
import { updateMerchantAccount, type MerchantAccountUpdateRequest } from '../../services/merchant-accounts/update-merchant-account.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { MerchantAccountUpdateInput } from '../../schema/inputs/merchant-account-update.input.ts';
import { adminCallerOf } from '../http/authentication.ts';
import { AdminHeaders, errorResponses, ref } from '../http/schemas.ts';
import { API_KEY_REQUIRED } from '../http/security.ts';
import type { TypedApp } from '../http/typed-app.ts';

const text = () => Type.Union([Type.String(), Type.Null()]);
const int = () => Type.Union([Type.Integer(), Type.Null()]);
const num = (description?: string) => Type.Union([Type.Number(), Type.Null()], description ? { description } : {});
const masked = () => Type.Union([Type.String(), Type.Null()], { description: '`****` + last 4 characters (`****` under 12 characters); null when none is stored' });

/** A merchant account as answered (spec 2.6): every field, gateway credentials masked. */
export const MerchantAccountRecord = Type.Object(
  {
    id: Type.Integer(),
    mid: Type.String(),
    title: Type.String(),
    companyId: Type.Integer(),
    agent: text(),
    acquiringBank: text(),
    gatewayId: Type.Union([Type.Integer(), Type.Null()], { description: "The gateway adapter's stable id (sandbox: 1); null only for a gateway name without one" }),
    enabledNetworkB: Type.Boolean(),
    enabledNetworkA: Type.Boolean(),
    descriptor: text(),
    mcc: text(),
    acquirerBINNetworkA: text(),
    acquirerBINNetworkB: text(),
    psp: text(),
    maxPrice: num(),
    verticalId: int(),
    monthlyCap: int(),
    reservePercentage: num('Decimal fraction: 0.1 is 10%'),
    discountRatePercentage: num('Decimal fraction: 0.1 is 10%'),
    gatewayTransactionFee: num(),
    chargebackFee: num(),
    routingNumber: text(),
    accountNumber: text(),
    brandId: int(),
    allowPremiumProgram: Type.Boolean(),
    fullyLive: Type.Boolean(),
    shorthandSuffix: text(),
    defaultCurrency: Type.String(),
    rdrFee: num(),
    alertFee: num(),
    cdrnFee: num(),
    allowRetriesFromOtherMids: Type.Boolean(),
    allowInsufficientFundsRetries: Type.Boolean(),
    capLimited: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    forceAllowRefunds: Type.Boolean(),
    dynamicDescriptorEnabled: Type.Boolean(),
    dynamicDescriptorPrefix: text(),
    dynamicDescriptorPrefix_NetworkB: text(),
    dynamicDescriptorFormat: int(),
    bankAuthFee: num(),
    bankDeclineFee: num(),
    bankAVSFee: num(),
    customFee: num(),
    customFeeApprovedOnly: num(),
    notes: text(),
    caid: text(),
    chargebackMitigationProviderId: int(),
    chargebackMitigationNotes: text(),
    processorPortalAccessId: int(),
    rowVersion: Type.Integer({ description: 'Send it back in an update; it goes up by one with each change' }),
    merchantDefinedField1: text(),
    merchantDefinedField2: text(),
    merchantDefinedField3: text(),
    customField1: text(),
    customField2: text(),
    customField3: text(),
    midOwnerId: Type.Integer({ description: '0, or 1 for an external partner MID' }),
    currencies: Type.Array(
      Type.Object({
        currency: Type.String(),
        gatewayCredentials: Type.Object({ apiKey: masked(), username: masked(), password: masked(), emailAddress: masked(), processorId: masked() }),
      }),
    ),
    company: Type.String(),
    gateway: Type.String(),
    vertical: text(),
    brand: text(),
    chargebackMitigationProvider: text(),
    processorPortalAccess: text(),
    parentCompany: text(),
    parentCompanyId: int(),
    requiresZip: Type.Boolean(),
    partnerStoreId: text(),
  },
  { $id: 'MerchantAccount', description: 'A merchant account (MID), spec 2.6' },
);

const ListAnswer = Type.Object({ success: Type.Literal(true), returnVal: Type.Array(ref(MerchantAccountRecord)) }, { description: "The tenant's and its child companies' merchant accounts, by id" });
const UpdateAnswer = Type.Object({ success: Type.Literal(true), message: Type.String(), returnVal: ref(MerchantAccountRecord) }, { description: 'Merchant account updated' });

/** Merchant-account administration (spec 4.7, 4.8); the GraphQL resolvers call the same services. */
export function adminRoutes(app: TypedApp, deps: { secretBox: SecretBox }): void {
  app.addSchema(MerchantAccountRecord);

  app.get('/api/admin/merchantaccounts', {
    schema: {
      operationId: 'listMerchantAccounts',
      summary: "The tenant's merchant accounts and those of its child companies (spec 4.7); credentials masked",
      tags: ['admin'],
      security: API_KEY_REQUIRED,
      headers: AdminHeaders,
      // No filters here (GraphQL's `merchantAccounts` has them): one sent is refused, not silently ignored.
      querystring: Type.Object({}, { additionalProperties: false, description: 'No query parameters' }),
      response: { 200: ListAnswer, ...errorResponses(401, 403, 400, 429, 500) },
    },
    async handler(request) {
      const caller = adminCallerOf(request);
      return { success: true as const, returnVal: await listMerchantAccounts(request.em, deps.secretBox, caller.tenantId) };
    },
  });

  app.put('/api/admin/merchantaccounts/:id', {
    schema: {
      operationId: 'updateMerchantAccount',
      summary: 'Updates a merchant account (spec 4.8) at the rowVersion read; audited with UserEmail',
      description:
        '`rowVersion` is required and must be the current version (else 409, nothing changed); every other field is optional and an omitted one keeps its value. ' +
        'Read-only: `id`, `mid`, `companyId`, `company`, `gatewayId`, `gateway`, `parentCompanyId`, `parentCompany` (accepted unchanged, 400 when changed); ' +
        '`vertical`, `brand`, `chargebackMitigationProvider` and `processorPortalAccess` follow their ids and are ignored; a new id must be one another account of the company already carries a name for (else 400 naming the id field). ' +
        '`currencies` replaces the set; a credential sent back masked keeps the stored secret, an absent or null one is removed, and a mask that matches no stored value of that currency (`****` and at most 4 characters) is 400. ' +
          '`title` must not be blank; `acquirerBINNetworkA`/`acquirerBINNetworkB` are 6 to 11 digits.',
      tags: ['admin'],
      security: API_KEY_REQUIRED,
      headers: AdminHeaders,
      params: Type.Object({ id: Type.String({ pattern: '^[1-9][0-9]{0,9}$', description: 'Merchant account id (integer)', examples: ['42'] }) }),
      body: MerchantAccountUpdateInput,
      response: { 200: UpdateAnswer, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500) },
    },
    async handler(request) {
      const caller = adminCallerOf(request);
      // Past the integer range no account can exist.
      if (Number(request.params.id) > 2_147_483_647) throw new DomainError('not_found', `Merchant account ${request.params.id} not found`);
      const update: MerchantAccountUpdateRequest = {
        tenantId: caller.tenantId,
        id: Number(request.params.id),
        actor: caller.userEmail,
        update: request.body as unknown as MerchantAccountUpdateRequest['update'],
      };
      return { success: true as const, message: 'Merchant account updated', returnVal: await updateMerchantAccount(request.em, deps.secretBox, update) };
    },
  });
}
