/**
 * The ISO 4217 currencies a card is charged in here: every active code but the fund codes (BOV, CHE, CHW, COU,
 * MXV, USN, UYI), precious metals and bond units (XAU, XAG, XPD, XPT, XBA–XBD), the SDR and its kin (XDR, XSU, XUA),
 * the testing and no-currency codes (XTS, XXX), and the two units of account with four decimals (CLF, UYW): amounts
 * are kept in hundredths, which cannot hold them. Codes withdrawn lately are kept while merchants may still hold
 * accounts in them (BGN, since the euro of 2026; ANG beside XCG, SLL beside SLE, ZWL beside ZWG); CUC, withdrawn in
 * 2021, is not. An unknown code was taken as a two-decimal currency: a payment in `XXX` was stored, and one in `CLF`
 * read a ten-thousandth as a hundredth.
 */
export const CHARGEABLE_CURRENCIES: readonly string[] = [
  ...['AED', 'AFN', 'ALL', 'AMD', 'ANG', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BHD', 'BIF', 'BMD', 'BND', 'BOB', 'BRL'],
  ...['BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHF', 'CLP', 'CNY', 'COP', 'CRC', 'CUP', 'CVE', 'CZK', 'DJF', 'DKK', 'DOP', 'DZD', 'EGP'],
  ...['ERN', 'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS', 'GIP', 'GMD', 'GNF', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR'],
  ...['IQD', 'IRR', 'ISK', 'JMD', 'JOD', 'JPY', 'KES', 'KGS', 'KHR', 'KMF', 'KPW', 'KRW', 'KWD', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL'],
  ...['LYD', 'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MRU', 'MUR', 'MVR', 'MWK', 'MXN', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK', 'NPR'],
  ...['NZD', 'OMR', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'PYG', 'QAR', 'RON', 'RSD', 'RUB', 'RWF', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD'],
  ...['SHP', 'SLE', 'SLL', 'SOS', 'SRD', 'SSP', 'STN', 'SVC', 'SYP', 'SZL', 'THB', 'TJS', 'TMT', 'TND', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH'],
  ...['UGX', 'USD', 'UYU', 'UZS', 'VED', 'VES', 'VND', 'VUV', 'WST', 'XAF', 'XCD', 'XCG', 'XOF', 'XPF', 'YER', 'ZAR', 'ZMW', 'ZWG', 'ZWL'],
];

const CHARGEABLE = new Set(CHARGEABLE_CURRENCIES);

export function isChargeableCurrency(code: string): boolean {
  return CHARGEABLE.has(code);
}

/** What a refusal says of a code that is none of them. */
export const CURRENCY_PROBLEM = 'must be an ISO 4217 currency code a card is charged in, upper case (USD, EUR, JPY, KWD…)';
/** A search filter's currency, which any letter case names. */
export const CURRENCY_FILTER_PROBLEM = 'must be an ISO 4217 currency code a card is charged in, in any letter case (USD, eur, JPY, KWD…)';
