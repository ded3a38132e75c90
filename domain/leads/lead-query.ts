import { LEAD_LIMITS, LEAD_STATUSES, type LeadStatus } from './lead.ts';
import { LeadQueryError } from './lead-errors.ts';
import { decodeKeysetCursor, encodeKeysetCursor } from '../validation/keyset-cursor.ts';
import { isCursorTimestamp } from '../validation/timestamps.ts';
import { fitsCharacters } from '../validation/characters.ts';

/** Filters of the lead query (spec 4.4); every given one must match. */
export interface LeadFilter {
  readonly id?: string;
  readonly email?: string;
  readonly sessionId?: string;
  readonly transactionId?: string;
  readonly subscriptionId?: number;
  readonly status?: LeadStatus;
}

/** Position after a lead in the `updated_at desc, id desc` order; `updatedAt` as PostgreSQL prints it. */
export interface LeadCursor {
  readonly updatedAt: string;
  readonly id: string;
}

export const LEAD_PAGE_SIZE = { default: 50, max: 100 } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INTEGER = /^[1-9][0-9]{0,9}$/;
const MAX_INT = 2_147_483_647;

const FILTER_NAMES = { id: 'id', email: 'email', session_id: 'sessionId', transaction_id: 'transactionId', subscription_id: 'subscriptionId', status: 'status' } as const;

/**
 * The REST query string (`id`, `email`, `session_id`, `transaction_id`, `subscription_id`, `status`, `limit`) as a
 * filter and a page size; every bad or unknown parameter is named. `limit` outside 1..100 is refused, not clamped.
 */
export function parseLeadQuery(query: Record<string, unknown>): { filter: LeadFilter; limit: number } {
  const problems: string[] = [];
  const filter: Record<string, string | number> = {};
  let limit: number = LEAD_PAGE_SIZE.default;
  for (const [name, raw] of Object.entries(query)) {
    if (typeof raw !== 'string') {
      problems.push(`${name}: must be given once`);
      continue;
    }
    if (name === 'limit') {
      const value = INTEGER.test(raw) ? Number(raw) : NaN;
      if (!(value >= 1 && value <= LEAD_PAGE_SIZE.max)) problems.push(`limit: must be an integer from 1 to ${LEAD_PAGE_SIZE.max}`);
      else limit = value;
      continue;
    }
    // Own names only: `constructor` or `toString` are no filter, though `in` finds them on every object.
    if (!Object.hasOwn(FILTER_NAMES, name)) {
      problems.push(`${name}: unknown query parameter`);
      continue;
    }
    const problem = checkFilter(name as keyof typeof FILTER_NAMES, raw);
    if (problem) problems.push(`${name}: ${problem}`);
    else filter[FILTER_NAMES[name as keyof typeof FILTER_NAMES]] = name === 'subscription_id' ? Number(raw) : raw;
  }
  if (problems.length > 0) throw new LeadQueryError(problems);
  return { filter: filter as LeadFilter, limit };
}

/** Why a filter value cannot match anything well-formed, or undefined when it is fine. */
export function checkFilter(name: keyof typeof FILTER_NAMES, value: string): string | undefined {
  switch (name) {
    case 'id':
      return UUID.test(value) ? undefined : 'must be a UUID';
    case 'email':
      return value.length >= 1 && fitsCharacters(value, LEAD_LIMITS.email) ? undefined : `must be 1 to ${LEAD_LIMITS.email} characters`;
    case 'session_id':
      return value.length >= 1 && fitsCharacters(value, LEAD_LIMITS.sessionId) ? undefined : `must be 1 to ${LEAD_LIMITS.sessionId} characters`;
    case 'transaction_id':
      return value.length >= 1 && fitsCharacters(value, 100) ? undefined : 'must be 1 to 100 characters';
    case 'subscription_id':
      return INTEGER.test(value) && Number(value) <= MAX_INT ? undefined : 'must be a positive integer';
    case 'status':
      return (LEAD_STATUSES as readonly string[]).includes(value) ? undefined : `must be one of: ${LEAD_STATUSES.join(', ')}`;
  }
}

export function encodeLeadCursor(cursor: LeadCursor): string {
  return encodeKeysetCursor('customerLeads', [cursor.updatedAt, cursor.id]);
}

export function decodeLeadCursor(value: string): LeadCursor {
  const [updatedAt, id] = decodeKeysetCursor('customerLeads', value, 2) ?? [];
  if (updatedAt !== undefined && id !== undefined && UUID.test(id) && isCursorTimestamp(updatedAt)) return { updatedAt, id };
  throw new LeadQueryError(['after: not a cursor of this query']);
}
