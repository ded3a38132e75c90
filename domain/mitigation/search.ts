import { validationError } from '../errors.ts';
import { CURRENCY_FILTER_PROBLEM, isChargeableCurrency } from '../currencies.ts';
import { toMoneyString } from '../money.ts';
import { decodeKeysetCursor, encodeKeysetCursor } from '../validation/keyset-cursor.ts';
import { SEARCH_YEARS } from '../validation/timestamps.ts';
import { keptName } from '../payments/person-name.ts';
import { normalizeEmail } from '../payments/card.ts';

export const MITIGATION_LIMITS = {
  defaultLimit: 100,
  maxLimit: 1000,
  /** Values one array filter may list. */
  maxValuesPerFilter: 1000,
  /**
   * Deepest page: skipping rows costs an index walk over them however it is done, so a page beyond 500,000 rows
   * must narrow the filter (a date range) instead. Page 500 of 1,000 stays well inside.
   */
  maxSkippedRows: 500_000,
  maxPageNumber: 500_000,
  /**
   * Index entries one page may walk in all: a parent's search reads each company's range (and, with
   * `includeUpdated`, the captured-later ones) as its own branch up to the page's end, so a deep page of a parent with
   * many children costs branches × (offset + limit). One branch reaches the deepest page (`maxSkippedRows`), four
   * reach page 499 of 1,000.
   */
  maxIndexEntriesPerPage: 2_000_000,
} as const;

/** Refuses a page whose branches would together walk more index entries than a page may. */
export function checkPageWork(branches: number, window: { offset: number; limit: number }): void {
  if (branches * (window.offset + window.limit) > MITIGATION_LIMITS.maxIndexEntriesPerPage) {
    throw validationError(
      'pageNumber',
      `pageNumber is too deep for a search over ${branches} companies/periods (at most ${MITIGATION_LIMITS.maxIndexEntriesPerPage} records read per page); narrow the search (dateFrom/dateTo, companyIds)`,
    );
  }
}

/** The filters of spec 4.10, normalised: every one given must match (AND); an array matches any of its values. */
export interface MitigationFilter {
  readonly emails?: readonly string[];
  readonly orderIds?: readonly number[];
  readonly transactionIds?: readonly string[];
  readonly gatewayTransactionIds?: readonly string[];
  /** First 6 digits. */
  readonly bin?: string;
  readonly last4?: string;
  /** Lower-cased: matched case-insensitively. */
  readonly firstName?: string;
  readonly lastName?: string;
  readonly authCodes?: readonly string[];
  readonly currency?: string;
  /** Half-open UTC range [from, to) of authorization (`sent`) times. */
  readonly from?: Date;
  readonly to?: Date;
  readonly descriptorContains?: string;
  readonly sandbox?: boolean;
  readonly applicationIds?: readonly number[];
  readonly productIds?: readonly number[];
  readonly campaignIds?: readonly number[];
  readonly merchantAccountIds?: readonly number[];
  readonly companyIds?: readonly number[];
  readonly subscriptionIds?: readonly number[];
  /** 2-decimal strings. */
  readonly amounts?: readonly string[];
  readonly includeUpdated: boolean;
}

export interface MitigationSearchInputShape {
  pageNumber?: number;
  limit?: number;
  emails?: string[];
  orderIds?: number[];
  transactionIds?: string[];
  gatewayTransactionIds?: string[];
  bin?: string;
  last4?: string;
  firstName?: string;
  lastName?: string;
  authCodes?: string[];
  currency?: string;
  dateFrom?: string;
  dateTo?: string;
  descriptorContains?: string;
  sandbox?: boolean;
  applicationIds?: number[];
  productIds?: number[];
  campaignIds?: number[];
  merchantAccountIds?: number[];
  companyIds?: number[];
  subscriptionIds?: number[];
  amounts?: number[];
  includeUpdated?: boolean;
}

const DAY_MS = 86_400_000;

/**
 * Days a period may name: `format: date` accepts 0000-01-01 and 9999-12-31, and PostgreSQL holds neither year 0 nor the
 * day after 9999-12-31 (the exclusive end of `dateTo`), so the years are bounded (`SEARCH_YEARS`) and anything outside
 * is a 400.
 */
function dayStart(text: string, field: string): Date {
  const date = new Date(`${text}T00:00:00.000Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text) throw validationError(field, `${field} must be a date (YYYY-MM-DD)`);
  const year = date.getUTCFullYear();
  if (year < SEARCH_YEARS.min || year > SEARCH_YEARS.max) throw validationError(field, `${field} must be a day of the years ${SEARCH_YEARS.min} to ${SEARCH_YEARS.max}`);
  return date;
}

/**
 * A transaction id as PostgreSQL's uuid cast takes it: exactly 8-4-4-4-12 hex digits. (`format: uuid` also accepts a
 * `urn:uuid:` prefix, which the cast refuses.)
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const STRICT_UUID = new RegExp(UUID_PATTERN);

/** Fewest characters of `descriptorContains`: the trigram index needs a whole trigram to narrow the search by. */
export const DESCRIPTOR_CONTAINS_MIN = 3;

/** A text filter after trimming: refused when nothing is left (REST's schema and GraphQL's arguments agree through this). */
function nonBlank(text: string | undefined, field: string, minLength = 1): string | undefined {
  if (text === undefined) return undefined;
  if (text.trim().length < minLength) throw validationError(field, `${field} must have at least ${minLength} character${minLength === 1 ? '' : 's'} besides spaces`);
  return text;
}

function nonBlankEach(values: readonly string[] | undefined, field: string): readonly string[] | undefined {
  values?.forEach((value, i) => nonBlank(value, `${field}[${i}]`));
  return values;
}

/** A currency no card is charged in matches no transaction: a mistake said, not an empty page. */
function chargeable(currency: string | undefined): string | undefined {
  if (currency !== undefined && !isChargeableCurrency(currency)) throw validationError('currency', `currency ${CURRENCY_FILTER_PROBLEM}`);
  return currency;
}

const distinct = <T>(values: readonly T[] | undefined): readonly T[] | undefined => (values === undefined ? undefined : [...new Set(values)]);

/** The filter of a request whose shape is already checked (schema); checks what a schema cannot say. */
export function parseMitigationFilter(input: MitigationSearchInputShape): MitigationFilter {
  const from = input.dateFrom === undefined ? undefined : dayStart(input.dateFrom, 'dateFrom');
  const to = input.dateTo === undefined ? undefined : new Date(dayStart(input.dateTo, 'dateTo').getTime() + DAY_MS);
  if (from && to && from >= to) throw validationError('dateTo', 'dateTo must not be before dateFrom');
  input.transactionIds?.forEach((id, i) => {
    if (!STRICT_UUID.test(id)) throw validationError(`transactionIds[${i}]`, `transactionIds[${i}] must be a UUID (8-4-4-4-12 hex digits)`);
  });
  return {
    // Written as payments keep them (lower case, one spelling of the domain), so any spelling finds the payment.
    emails: distinct(nonBlankEach(input.emails, 'emails')?.map(normalizeEmail)),
    orderIds: distinct(input.orderIds),
    transactionIds: distinct(input.transactionIds?.map((id) => id.toLowerCase())),
    gatewayTransactionIds: distinct(nonBlankEach(input.gatewayTransactionIds, 'gatewayTransactionIds')),
    bin: input.bin,
    last4: input.last4,
    // Compared lower-cased by PostgreSQL on both sides: JavaScript's rules differ for some letters (a final Σ, İ).
    firstName: keptName(nonBlank(input.firstName, 'firstName')),
    lastName: keptName(nonBlank(input.lastName, 'lastName')),
    authCodes: distinct(nonBlankEach(input.authCodes, 'authCodes')),
    currency: chargeable(input.currency?.toUpperCase()),
    from,
    to,
    descriptorContains: nonBlank(input.descriptorContains, 'descriptorContains', DESCRIPTOR_CONTAINS_MIN),
    sandbox: input.sandbox,
    applicationIds: distinct(input.applicationIds),
    productIds: distinct(input.productIds),
    campaignIds: distinct(input.campaignIds),
    merchantAccountIds: distinct(input.merchantAccountIds),
    companyIds: distinct(input.companyIds),
    subscriptionIds: distinct(input.subscriptionIds),
    amounts: distinct(input.amounts?.map((amount, i) => toMoneyString(amount, `amounts[${i}]`))),
    includeUpdated: input.includeUpdated === true,
  };
}

export interface MitigationPageRequest {
  readonly pageNumber: number;
  readonly limit: number;
}

export function parseMitigationPage(input: { pageNumber?: number; limit?: number }): MitigationPageRequest {
  const pageNumber = input.pageNumber ?? 1;
  const limit = input.limit ?? MITIGATION_LIMITS.defaultLimit;
  if (limit < 1 || limit > MITIGATION_LIMITS.maxLimit) throw validationError('limit', `limit must be 1 to ${MITIGATION_LIMITS.maxLimit}`);
  if (pageNumber < 1) throw validationError('pageNumber', 'pageNumber must be 1 or more');
  if ((pageNumber - 1) * limit > MITIGATION_LIMITS.maxSkippedRows) {
    throw validationError('pageNumber', `pageNumber skips more than ${MITIGATION_LIMITS.maxSkippedRows} records; narrow the search (dateFrom/dateTo)`);
  }
  return { pageNumber, limit };
}

/** A mitigation transaction record (spec 2.8). */
export interface MitigationTransaction {
  gateway: string;
  transactionId: string;
  orderId: number;
  sent: string;
  email: string;
  sandbox: boolean;
  applicationId: number;
  status: string;
  statusId: number;
  success: boolean;
  completed: string | null;
  currency: string;
  amount: number;
  mid: string | null;
  descriptor: string | null;
  customerId: number;
  authCode: string | null;
  gatewayTransactionId: string | null;
  firstName: string | null;
  lastName: string | null;
  bin: string;
  last4: string;
  refunded: boolean;
  refundable: boolean;
  hasAlert: boolean;
  chargedBack: boolean;
  originalTransactionId: string | null;
}

/**
 * Where a keyset page starts: after this record in the search order (newest first, ties by id descending).
 * `sentMicros` is the authorization time in microseconds since the epoch, as text: PostgreSQL keeps microseconds and a
 * JavaScript Date only milliseconds, and a cursor that rounded would skip or repeat rows sent within one millisecond.
 */
export interface MitigationCursor {
  readonly sentMicros: string;
  readonly id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function encodeMitigationCursor(cursor: MitigationCursor): string {
  return encodeKeysetCursor('transactions', [cursor.sentMicros, cursor.id]);
}

/**
 * Times a cursor may hold, in microseconds: from the epoch to the start of year 10000. A forged cursor far outside
 * would overflow PostgreSQL's timestamp arithmetic (a 500); outside this range it is no cursor of this search.
 */
const CURSOR_MICROS = { min: 0n, max: 253_402_300_800_000_000n } as const;

export function decodeMitigationCursor(text: string): MitigationCursor {
  const [sentMicros, id] = decodeKeysetCursor('transactions', text, 2) ?? [];
  const micros = sentMicros !== undefined && /^-?\d{1,18}$/.test(sentMicros) ? BigInt(sentMicros) : -1n;
  if (sentMicros === undefined || id === undefined || !UUID.test(id) || micros < CURSOR_MICROS.min || micros >= CURSOR_MICROS.max) {
    throw validationError('after', 'after is not a cursor of this search');
  }
  return { sentMicros, id };
}
