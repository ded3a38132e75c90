import { ArgsType, Field, Float, Int, ObjectType } from 'type-graphql';
import { Matches, Max, MaxLength, Min, ValidateBy } from 'class-validator';
import { DateTimeResolver, JSONObjectResolver } from 'graphql-scalars';
import { isActorEmail } from '../../domain/auth/api-key.ts';
import { CURRENCY_FILTER_PROBLEM, isChargeableCurrency } from '../../domain/currencies.ts';

@ObjectType('GatewayCredentials', { description: 'Masked: `****` plus the last 4 characters (`****` alone under 12 characters)' })
export class GatewayCredentialsType {
  @Field(() => String, { nullable: true }) apiKey?: string;
  @Field(() => String, { nullable: true }) username?: string;
  @Field(() => String, { nullable: true }) password?: string;
  @Field(() => String, { nullable: true }) emailAddress?: string;
  @Field(() => String, { nullable: true }) processorId?: string;
}

@ObjectType('MerchantAccountCurrency')
export class MerchantAccountCurrencyType {
  @Field(() => String) currency!: string;
  @Field(() => GatewayCredentialsType) gatewayCredentials!: GatewayCredentialsType;
}

/** The fields of spec 2.6 by GraphQL type; declared as a table so the type and the REST record list the same fields. */
const FIELDS: Record<string, [() => unknown, boolean, string?]> = {
  id: [() => Int, false],
  mid: [() => String, false],
  title: [() => String, false],
  companyId: [() => Int, false],
  agent: [() => String, true],
  acquiringBank: [() => String, true],
  gatewayId: [() => Int, true],
  enabledNetworkB: [() => Boolean, false],
  enabledNetworkA: [() => Boolean, false],
  descriptor: [() => String, true],
  mcc: [() => String, true],
  acquirerBINNetworkA: [() => String, true],
  acquirerBINNetworkB: [() => String, true],
  psp: [() => String, true],
  maxPrice: [() => Float, true, 'Exact to the cent; the most one payment may be, in its own currency'],
  verticalId: [() => Int, true],
  monthlyCap: [() => Int, true, 'The most approved plus in-flight volume a calendar month may hold, for each currency in its own units'],
  reservePercentage: [() => Float, true, 'Decimal fraction: 0.1 is 10%'],
  discountRatePercentage: [() => Float, true, 'Decimal fraction: 0.1 is 10%'],
  gatewayTransactionFee: [() => Float, true],
  chargebackFee: [() => Float, true],
  routingNumber: [() => String, true],
  accountNumber: [() => String, true],
  brandId: [() => Int, true],
  allowPremiumProgram: [() => Boolean, false],
  fullyLive: [() => Boolean, false],
  shorthandSuffix: [() => String, true],
  defaultCurrency: [() => String, false],
  rdrFee: [() => Float, true],
  alertFee: [() => Float, true],
  cdrnFee: [() => Float, true],
  allowRetriesFromOtherMids: [() => Boolean, false],
  allowInsufficientFundsRetries: [() => Boolean, false],
  capLimited: [() => DateTimeResolver, true],
  forceAllowRefunds: [() => Boolean, false],
  dynamicDescriptorEnabled: [() => Boolean, false],
  dynamicDescriptorPrefix: [() => String, true],
  dynamicDescriptorPrefix_NetworkB: [() => String, true],
  dynamicDescriptorFormat: [() => Int, true],
  bankAuthFee: [() => Float, true],
  bankDeclineFee: [() => Float, true],
  bankAVSFee: [() => Float, true],
  customFee: [() => Float, true],
  customFeeApprovedOnly: [() => Float, true],
  notes: [() => String, true],
  caid: [() => String, true],
  chargebackMitigationProviderId: [() => Int, true],
  chargebackMitigationNotes: [() => String, true],
  processorPortalAccessId: [() => Int, true],
  rowVersion: [() => Int, false, 'Send it back in updateMerchantAccount; it goes up by one with each change'],
  merchantDefinedField1: [() => String, true],
  merchantDefinedField2: [() => String, true],
  merchantDefinedField3: [() => String, true],
  customField1: [() => String, true],
  customField2: [() => String, true],
  customField3: [() => String, true],
  midOwnerId: [() => Int, false, '0, or 1 for an external partner MID'],
  currencies: [() => [MerchantAccountCurrencyType], false],
  company: [() => String, false],
  gateway: [() => String, false],
  vertical: [() => String, true],
  brand: [() => String, true],
  chargebackMitigationProvider: [() => String, true],
  processorPortalAccess: [() => String, true],
  parentCompany: [() => String, true],
  parentCompanyId: [() => Int, true],
  requiresZip: [() => Boolean, false],
  partnerStoreId: [() => String, true],
};

@ObjectType('MerchantAccount', { description: 'A merchant account (MID), spec 2.6; the same record as GET /api/admin/merchantaccounts' })
export class MerchantAccountType {
  [field: string]: unknown;
}
for (const [name, [type, nullable, description]] of Object.entries(FIELDS)) {
  Field(type as () => typeof String, { nullable, ...(description ? { description } : {}) })(MerchantAccountType.prototype, name);
}

@ArgsType()
export class MerchantAccountsArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;

  @Field(() => Boolean, { nullable: true, description: 'Only accounts whose fullyLive equals this' })
  live?: boolean;

  @Field(() => Int, { nullable: true, description: 'Only accounts of this brand id' })
  @Min(1)
  brandId?: number;

  @Field(() => String, { nullable: true, description: 'Only accounts at this gateway (its name, e.g. sandbox)' })
  @MaxLength(64)
  gateway?: string;

  @Field(() => String, { nullable: true, description: 'Only accounts configured for this currency (ISO 4217, any case)' })
  // A code no card is charged in matches no account: refused, as the mitigation search's currency is.
  @ValidateBy({
    name: 'chargeableCurrency',
    validator: { validate: (value) => typeof value === 'string' && isChargeableCurrency(value.toUpperCase()), defaultMessage: () => `currency ${CURRENCY_FILTER_PROBLEM}` },
  })
  currency?: string;
}

@ArgsType()
export class UpdateMerchantAccountArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;

  @Field(() => Int)
  @Min(1)
  @Max(2_147_483_647)
  id!: number;

  @Field(() => JSONObjectResolver, {
    description: 'The body of PUT /api/admin/merchantaccounts/{id}, checked by the same schema: rowVersion required, omitted fields unchanged',
  })
  input!: Record<string, unknown>;

  @Field(() => String, { description: 'Who is acting (the REST UserEmail header); recorded in the audit trail' })
  // The REST header's rule: the same actor is taken by both APIs.
  @ValidateBy({ name: 'actorEmail', validator: { validate: (value) => typeof value === 'string' && isActorEmail(value), defaultMessage: () => 'userEmail must be an e-mail address' } })
  @MaxLength(320)
  userEmail!: string;
}

@ObjectType('MerchantAccountAuditEntry', { description: 'One change to a merchant account: who, when, and each changed field before and after (never credentials)' })
export class MerchantAccountAuditEntryType {
  @Field(() => String) id!: string;
  @Field(() => Int) merchantAccountId!: number;
  @Field(() => String, { description: 'The UserEmail of the admin' }) actor!: string;
  @Field(() => String) action!: string;
  @Field(() => JSONObjectResolver, { description: 'Field name to {before, after}; currencies as codes, changed credentials as currency codes only' })
  changes!: Record<string, unknown>;
  @Field(() => DateTimeResolver) createdAt!: Date;
}

@ArgsType()
export class MerchantAccountAuditArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;

  @Field(() => Int, { nullable: true, description: 'Only this account' })
  @Min(1)
  merchantAccountId?: number;

  @Field(() => Int, { nullable: true, description: 'Entries, 1 to 100 (default 50), newest first' })
  @Min(1)
  @Max(100)
  first?: number;

  @Field(() => String, { nullable: true, description: 'The id of the last entry read: the next page starts after it' })
  // 18 digits always fit the bigint id; 19 may not (a failed cast would be a 500).
  @Matches(/^\d{1,18}$/)
  before?: string;
}
