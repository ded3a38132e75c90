import { validationError } from '../errors.ts';

export const STATUS_FLAG_FILTERS = ['successful', 'isIssuerDecline', 'isInsufficientFunds', 'isInvalidCardDetails', 'isOther'] as const;
export type StatusFlagFilter = (typeof STATUS_FLAG_FILTERS)[number];

export interface StatusListQuery {
  readonly pageNumber: number;
  readonly pageSize: number;
  readonly search?: string;
  /** Each given flag must equal the record's flag (filters combine with AND). */
  readonly flags: Partial<Record<StatusFlagFilter, boolean>>;
}

export const STATUS_PAGE_SIZE = { default: 50, min: 1, max: 200 } as const;
export const STATUS_SEARCH_MAX_LENGTH = 200;

/** The raw values a transport received; strings from a query string, typed values from GraphQL. */
export type RawStatusListQuery = Partial<Record<'pageNumber' | 'pageSize' | 'search' | StatusFlagFilter, unknown>>;

/** Validates a status-list query; every failure names the parameter. Shared by REST and GraphQL. */
export function parseStatusListQuery(raw: RawStatusListQuery): StatusListQuery {
  const pageNumber = optionalInteger(raw.pageNumber, 'pageNumber', 1, Number.MAX_SAFE_INTEGER) ?? 1;
  const pageSize = optionalInteger(raw.pageSize, 'pageSize', STATUS_PAGE_SIZE.min, STATUS_PAGE_SIZE.max) ?? STATUS_PAGE_SIZE.default;
  const search = optionalSearch(raw.search);
  const flags: Partial<Record<StatusFlagFilter, boolean>> = {};
  for (const flag of STATUS_FLAG_FILTERS) {
    const value = optionalBoolean(raw[flag], flag);
    if (value !== undefined) flags[flag] = value;
  }
  return { pageNumber, pageSize, search, flags };
}

function optionalInteger(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const number = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number)) throw validationError(name, `${name} must be an integer`);
  if (number < min || number > max) {
    throw validationError(name, number < min && max === Number.MAX_SAFE_INTEGER ? `${name} must be at least ${min}` : `${name} must be between ${min} and ${max}`);
  }
  return number;
}

function optionalBoolean(value: unknown, name: string): boolean | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw validationError(name, `${name} must be true or false`);
}

function optionalSearch(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw validationError('search', 'search must be a string');
  const trimmed = value.trim();
  if (trimmed.length > STATUS_SEARCH_MAX_LENGTH) throw validationError('search', `search must be at most ${STATUS_SEARCH_MAX_LENGTH} characters`);
  return trimmed === '' ? undefined : trimmed;
}
