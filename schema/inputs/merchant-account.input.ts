import { Type, type Static } from '@sinclair/typebox';
import { int4 } from './int4.ts';

/** Exact decimal amount: a JSON number or a decimal string, at most 2 fraction digits. Kept as a string. */
export const Money = Type.Union([Type.Number({ minimum: 0 }), Type.String({ format: 'money', description: 'Up to 12 digits, at most 2 decimals: `"1234.56"`' })]);
/** Decimal fraction such as 0.10 (10%). */
export const Fraction = Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.String({ pattern: '^(0(\\.\\d{1,4})?|1(\\.0{1,4})?)$' })]);

const text = (maxLength = 255) => Type.String({ maxLength });
const nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer> | typeof Money | typeof Fraction>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const GatewayCredentials = Type.Object(
  {
    apiKey: Type.Optional(nullable(text(500))),
    username: Type.Optional(nullable(text(200))),
    password: Type.Optional(nullable(text(500))),
    emailAddress: Type.Optional(nullable(text(320))),
    processorId: Type.Optional(nullable(text(200))),
  },
  { additionalProperties: false },
);
export type GatewayCredentials = Static<typeof GatewayCredentials>;

export const MerchantAccountCurrencyInput = Type.Object(
  { currency: Type.String({ format: 'currency' }), gatewayCredentials: Type.Optional(GatewayCredentials) },
  { additionalProperties: false },
);

/**
 * The writable fields of a merchant account (spec 2.6). Ids of the owning company and names derived
 * from other records are not writable here; `gateway` names the processor adapter.
 */
export const MerchantAccountFields = {
  /** A MID's name in every list and report: something to read, never blank. */
  title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
  agent: nullable(text()),
  acquiringBank: nullable(text()),
  gateway: Type.String({ minLength: 1, maxLength: 64 }),
  gatewayId: nullable(int4()),
  enabledNetworkA: Type.Boolean(),
  enabledNetworkB: Type.Boolean(),
  descriptor: nullable(text()),
  mcc: nullable(Type.String({ pattern: '^\\d{4}$' })),
  acquirerBINNetworkA: nullable(Type.String({ pattern: '^\\d{6,11}$' })),
  acquirerBINNetworkB: nullable(Type.String({ pattern: '^\\d{6,11}$' })),
  psp: nullable(text()),
  maxPrice: nullable(Money),
  verticalId: nullable(int4()),
  vertical: nullable(text()),
  monthlyCap: nullable(int4({ minimum: 0 })),
  reservePercentage: nullable(Fraction),
  discountRatePercentage: nullable(Fraction),
  gatewayTransactionFee: nullable(Money),
  chargebackFee: nullable(Money),
  routingNumber: nullable(text(34)),
  accountNumber: nullable(text(34)),
  brandId: nullable(int4()),
  brand: nullable(text()),
  midPortalUrl: nullable(text(2048)),
  allowPremiumProgram: Type.Boolean(),
  fullyLive: Type.Boolean(),
  shorthandSuffix: nullable(text(32)),
  defaultCurrency: Type.String({ format: 'currency' }),
  rdrFee: nullable(Money),
  alertFee: nullable(Money),
  cdrnFee: nullable(Money),
  allowRetriesFromOtherMids: Type.Boolean(),
  allowInsufficientFundsRetries: Type.Boolean(),
  capLimited: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  forceAllowRefunds: Type.Boolean(),
  dynamicDescriptorEnabled: Type.Boolean(),
  dynamicDescriptorPrefix: nullable(text(64)),
  dynamicDescriptorPrefix_NetworkB: nullable(text(64)),
  dynamicDescriptorFormat: nullable(int4()),
  bankAuthFee: nullable(Money),
  bankDeclineFee: nullable(Money),
  bankAVSFee: nullable(Money),
  customFee: nullable(Money),
  customFeeApprovedOnly: nullable(Money),
  notes: nullable(text(10_000)),
  caid: nullable(text(64)),
  chargebackMitigationProviderId: nullable(int4()),
  chargebackMitigationProvider: nullable(text()),
  chargebackMitigationNotes: nullable(text(10_000)),
  processorPortalAccessId: nullable(int4()),
  processorPortalAccess: nullable(text()),
  merchantDefinedField1: nullable(text()),
  merchantDefinedField2: nullable(text()),
  merchantDefinedField3: nullable(text()),
  customField1: nullable(text()),
  customField2: nullable(text()),
  customField3: nullable(text()),
  midOwnerId: int4({ minimum: 0, maximum: 1 }),
  requiresZip: Type.Boolean(),
  partnerStoreId: nullable(text()),
  currencies: Type.Array(MerchantAccountCurrencyInput, { maxItems: 50 }),
};

/** A merchant account in a provisioning fixture: `mid` and `title` required, every other field optional. */
export const MerchantAccountProvisionInput = Type.Composite(
  [Type.Object({ mid: Type.String({ minLength: 1, maxLength: 64 }), title: MerchantAccountFields.title }), Type.Partial(Type.Omit(Type.Object(MerchantAccountFields), ['title']))],
  { additionalProperties: false },
);
export type MerchantAccountProvisionInput = Static<typeof MerchantAccountProvisionInput>;
