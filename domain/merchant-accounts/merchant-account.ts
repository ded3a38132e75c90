import { validationError } from '../errors.ts';
import { toFractionString, toMoneyString } from '../money.ts';
import type { IncomingCredentials, MaskedCredentials } from './credentials.ts';

/** A merchant account as the admin API answers it: every field of spec 2.6, credentials masked. */
export interface MerchantAccountView {
  id: number;
  mid: string;
  title: string;
  companyId: number;
  agent: string | null;
  acquiringBank: string | null;
  gatewayId: number | null;
  enabledNetworkB: boolean;
  enabledNetworkA: boolean;
  descriptor: string | null;
  mcc: string | null;
  acquirerBINNetworkA: string | null;
  acquirerBINNetworkB: string | null;
  psp: string | null;
  maxPrice: number | null;
  verticalId: number | null;
  monthlyCap: number | null;
  reservePercentage: number | null;
  discountRatePercentage: number | null;
  gatewayTransactionFee: number | null;
  chargebackFee: number | null;
  routingNumber: string | null;
  accountNumber: string | null;
  brandId: number | null;
  allowPremiumProgram: boolean;
  fullyLive: boolean;
  shorthandSuffix: string | null;
  defaultCurrency: string;
  rdrFee: number | null;
  alertFee: number | null;
  cdrnFee: number | null;
  allowRetriesFromOtherMids: boolean;
  allowInsufficientFundsRetries: boolean;
  capLimited: string | null;
  forceAllowRefunds: boolean;
  dynamicDescriptorEnabled: boolean;
  dynamicDescriptorPrefix: string | null;
  dynamicDescriptorPrefix_NetworkB: string | null;
  dynamicDescriptorFormat: number | null;
  bankAuthFee: number | null;
  bankDeclineFee: number | null;
  bankAVSFee: number | null;
  customFee: number | null;
  customFeeApprovedOnly: number | null;
  notes: string | null;
  caid: string | null;
  chargebackMitigationProviderId: number | null;
  chargebackMitigationNotes: string | null;
  processorPortalAccessId: number | null;
  rowVersion: number;
  merchantDefinedField1: string | null;
  merchantDefinedField2: string | null;
  merchantDefinedField3: string | null;
  customField1: string | null;
  customField2: string | null;
  customField3: string | null;
  midOwnerId: number;
  currencies: { currency: string; gatewayCredentials: MaskedCredentials }[];
  company: string;
  gateway: string;
  vertical: string | null;
  brand: string | null;
  chargebackMitigationProvider: string | null;
  processorPortalAccess: string | null;
  parentCompany: string | null;
  parentCompanyId: number | null;
  requiresZip: boolean;
  partnerStoreId: string | null;
}

export type FieldKind = 'text' | 'integer' | 'boolean' | 'money' | 'fraction' | 'datetime';

/** Fields an update may change, with how their values compare and are stored. */
export const WRITABLE_FIELDS = {
  title: 'text',
  agent: 'text',
  acquiringBank: 'text',
  enabledNetworkB: 'boolean',
  enabledNetworkA: 'boolean',
  descriptor: 'text',
  mcc: 'text',
  acquirerBINNetworkA: 'text',
  acquirerBINNetworkB: 'text',
  psp: 'text',
  maxPrice: 'money',
  verticalId: 'integer',
  monthlyCap: 'integer',
  reservePercentage: 'fraction',
  discountRatePercentage: 'fraction',
  gatewayTransactionFee: 'money',
  chargebackFee: 'money',
  routingNumber: 'text',
  accountNumber: 'text',
  brandId: 'integer',
  allowPremiumProgram: 'boolean',
  fullyLive: 'boolean',
  shorthandSuffix: 'text',
  defaultCurrency: 'text',
  rdrFee: 'money',
  alertFee: 'money',
  cdrnFee: 'money',
  allowRetriesFromOtherMids: 'boolean',
  allowInsufficientFundsRetries: 'boolean',
  capLimited: 'datetime',
  forceAllowRefunds: 'boolean',
  dynamicDescriptorEnabled: 'boolean',
  dynamicDescriptorPrefix: 'text',
  dynamicDescriptorPrefix_NetworkB: 'text',
  dynamicDescriptorFormat: 'integer',
  bankAuthFee: 'money',
  bankDeclineFee: 'money',
  bankAVSFee: 'money',
  customFee: 'money',
  customFeeApprovedOnly: 'money',
  notes: 'text',
  caid: 'text',
  chargebackMitigationProviderId: 'integer',
  chargebackMitigationNotes: 'text',
  processorPortalAccessId: 'integer',
  merchantDefinedField1: 'text',
  merchantDefinedField2: 'text',
  merchantDefinedField3: 'text',
  customField1: 'text',
  customField2: 'text',
  customField3: 'text',
  midOwnerId: 'integer',
  requiresZip: 'boolean',
  partnerStoreId: 'text',
} as const satisfies Partial<Record<keyof MerchantAccountView, FieldKind>>;
export type WritableField = keyof typeof WRITABLE_FIELDS;

/** Identity and ownership: sent back unchanged they are accepted, changed they are refused (provisioning sets them). */
export const READ_ONLY_FIELDS = ['id', 'mid', 'companyId', 'company', 'gatewayId', 'gateway', 'parentCompanyId', 'parentCompany'] as const;

/** Names that follow their id: resolved by the product, ignored in an update (the id is what a caller changes). */
export const RESOLVED_NAMES = {
  vertical: 'verticalId',
  brand: 'brandId',
  chargebackMitigationProvider: 'chargebackMitigationProviderId',
  processorPortalAccess: 'processorPortalAccessId',
} as const satisfies Partial<Record<keyof MerchantAccountView, WritableField>>;
export type ResolvedName = keyof typeof RESOLVED_NAMES;

/** An update as validated by its schema: `rowVersion` plus any subset of the fields of spec 2.6. */
export type MerchantAccountUpdate = { rowVersion: number; currencies?: { currency: string; gatewayCredentials?: IncomingCredentials }[] } & {
  [K in WritableField]?: unknown;
} & Partial<Record<(typeof READ_ONLY_FIELDS)[number] | ResolvedName, unknown>>;

/** A stored value in the form it is written and compared in: exact decimals and instants as text. */
export type StoredValue = string | number | boolean | null;

/** `incoming`: a value from a request, checked; else a stored one, already valid (a stored instant is only re-formatted). */
function normalise(field: WritableField, value: unknown, incoming: boolean): StoredValue {
  if (value === null || value === undefined) return null;
  switch (WRITABLE_FIELDS[field] as FieldKind) {
    case 'money':
      return toMoneyString(value as number | string, field);
    case 'fraction':
      return toFractionString(value as number | string, field);
    case 'datetime':
      return incoming ? toStoredInstant(value as string, field) : new Date(value as string).toISOString();
    default:
      return value as StoredValue;
  }
}

/**
 * The years an instant may fall in (UTC). The schema's `date-time` format accepts what neither a JavaScript Date nor
 * PostgreSQL can hold (a leap second `23:59:60`, year 0000, an offset that carries 9999-12-31 into year 10000); each of
 * those is a 400 naming the field here instead of a RangeError or a failed cast.
 */
export const INSTANT_YEARS = { min: 1970, max: 9998 } as const;

function toStoredInstant(text: string, field: string): string {
  const instant = new Date(text);
  const year = instant.getUTCFullYear();
  if (Number.isNaN(instant.getTime()) || /T\d\d:\d\d:60/.test(text) || year < INSTANT_YEARS.min || year > INSTANT_YEARS.max) {
    throw validationError(field, `${field} must be a date-time between ${INSTANT_YEARS.min} and ${INSTANT_YEARS.max} (UTC), without leap seconds`);
  }
  return instant.toISOString();
}

/** Columns that may not be null (the schema accepts null only where the field is nullable; this names the field). */
const NOT_NULL: readonly WritableField[] = [
  'title', 'enabledNetworkA', 'enabledNetworkB', 'allowPremiumProgram', 'fullyLive', 'defaultCurrency', 'allowRetriesFromOtherMids',
  'allowInsufficientFundsRetries', 'forceAllowRefunds', 'dynamicDescriptorEnabled', 'midOwnerId', 'requiresZip',
];

export interface FieldChange {
  readonly before: StoredValue;
  readonly after: StoredValue;
}

/**
 * What an update changes on the account, field by field (omitted fields keep their value). Refuses a changed
 * read-only field; the names that follow an id are ignored.
 */
export function planFieldChanges(current: MerchantAccountView, update: MerchantAccountUpdate): Map<WritableField, FieldChange> {
  for (const field of READ_ONLY_FIELDS) {
    if (update[field] !== undefined && update[field] !== current[field]) throw validationError(field, `${field} is read-only`);
  }
  const changes = new Map<WritableField, FieldChange>();
  for (const field of Object.keys(WRITABLE_FIELDS) as WritableField[]) {
    if (!(field in update) || update[field] === undefined) continue;
    if (update[field] === null && NOT_NULL.includes(field)) throw validationError(field, `${field} must not be null`);
    const after = normalise(field, update[field], true);
    const before = normalise(field, current[field], false);
    if (after !== before) changes.set(field, { before, after });
  }
  return changes;
}
