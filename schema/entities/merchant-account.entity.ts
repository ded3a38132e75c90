import { defineEntity, p } from '@mikro-orm/core';
import { Tenant } from './tenant.entity.ts';

const money = () => p.decimal('string').precision(14).scale(2).nullable();
const fraction = () => p.decimal('string').precision(7).scale(4).nullable();
const optionalText = (length = 255) => p.string().length(length).nullable();

/**
 * A merchant account (MID) at a processor: every field of spec 2.6. Amounts are exact decimals
 * (strings in JS); percentages are decimal fractions (0.10 = 10%). Gateway credentials live in
 * `MerchantAccountCurrency`, encrypted.
 */
const MerchantAccountSchema = defineEntity({
  name: 'MerchantAccount',
  tableName: 'merchant_accounts',
  properties: {
    id: p.integer().primary().autoincrement(),
    tenant: () => p.manyToOne(Tenant).deleteRule('cascade'),
    mid: p.string().length(64).unique(),
    title: p.string().length(200),
    agent: optionalText(),
    acquiringBank: optionalText(),
    /** Processor adapter this MID uses (`sandbox`, ...). */
    gateway: p.string().length(64),
    gatewayId: p.integer().nullable(),
    enabledNetworkA: p.boolean().default(true),
    enabledNetworkB: p.boolean().default(true),
    descriptor: optionalText(),
    mcc: optionalText(4),
    acquirerBINNetworkA: optionalText(11).fieldName('acquirer_bin_network_a'),
    acquirerBINNetworkB: optionalText(11).fieldName('acquirer_bin_network_b'),
    psp: optionalText(),
    maxPrice: money(),
    verticalId: p.integer().nullable(),
    vertical: optionalText(),
    monthlyCap: p.integer().nullable(),
    reservePercentage: fraction(),
    discountRatePercentage: fraction(),
    gatewayTransactionFee: money(),
    chargebackFee: money(),
    routingNumber: optionalText(34),
    accountNumber: optionalText(34),
    brandId: p.integer().nullable(),
    brand: optionalText(),
    midPortalUrl: optionalText(2048),
    allowPremiumProgram: p.boolean().default(false),
    fullyLive: p.boolean().default(false),
    shorthandSuffix: optionalText(32),
    defaultCurrency: p.string().length(3).default('USD'),
    rdrFee: money(),
    alertFee: money(),
    cdrnFee: money(),
    allowRetriesFromOtherMids: p.boolean().default(false),
    allowInsufficientFundsRetries: p.boolean().default(false),
    capLimited: p.datetime().nullable(),
    forceAllowRefunds: p.boolean().default(false),
    dynamicDescriptorEnabled: p.boolean().default(false),
    dynamicDescriptorPrefix: optionalText(64),
    dynamicDescriptorPrefixNetworkB: optionalText(64),
    dynamicDescriptorFormat: p.integer().nullable(),
    bankAuthFee: money(),
    bankDeclineFee: money(),
    bankAVSFee: money().fieldName('bank_avs_fee'),
    customFee: money(),
    customFeeApprovedOnly: money(),
    notes: p.text().nullable(),
    caid: optionalText(64),
    chargebackMitigationProviderId: p.integer().nullable(),
    chargebackMitigationProvider: optionalText(),
    chargebackMitigationNotes: p.text().nullable(),
    processorPortalAccessId: p.integer().nullable(),
    processorPortalAccess: optionalText(),
    merchantDefinedField1: optionalText(),
    merchantDefinedField2: optionalText(),
    merchantDefinedField3: optionalText(),
    customField1: optionalText(),
    customField2: optionalText(),
    customField3: optionalText(),
    midOwnerId: p.integer().default(0),
    requiresZip: p.boolean().default(false),
    partnerStoreId: optionalText(),
    rowVersion: p.integer().version(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  indexes: [{ properties: ['tenant'] }],
});
export class MerchantAccount extends MerchantAccountSchema.class {}
MerchantAccountSchema.setClass(MerchantAccount);

/** A currency a MID settles in, with the processor credentials for it (AES-256-GCM ciphertext). */
const MerchantAccountCurrencySchema = defineEntity({
  name: 'MerchantAccountCurrency',
  tableName: 'merchant_account_currencies',
  properties: {
    id: p.integer().primary().autoincrement(),
    merchantAccount: () => p.manyToOne(MerchantAccount).deleteRule('cascade'),
    currency: p.string().length(3),
    credentialsCiphertext: p.text(),
  },
  uniques: [{ properties: ['merchantAccount', 'currency'] }],
});
export class MerchantAccountCurrency extends MerchantAccountCurrencySchema.class {}
MerchantAccountCurrencySchema.setClass(MerchantAccountCurrency);

/**
 * Volume of a MID per calendar month and currency, kept as running totals for MID selection (`monthlyCap`, which
 * limits each currency's volume in its own units): approved, and reserved by attempts whose outcome is not known
 * yet. Approved plus reserved never passes the cap.
 */
const MerchantAccountVolumeSchema = defineEntity({
  name: 'MerchantAccountVolume',
  tableName: 'merchant_account_volumes',
  properties: {
    merchantAccount: () => p.manyToOne(MerchantAccount).primary().deleteRule('cascade'),
    month: p.date().primary(),
    currency: p.string().length(3).primary(),
    approvedAmount: p.decimal('string').precision(16).scale(2),
    reservedAmount: p.decimal('string').precision(16).scale(2).default(0),
  },
});
export class MerchantAccountVolume extends MerchantAccountVolumeSchema.class {}
MerchantAccountVolumeSchema.setClass(MerchantAccountVolume);
