import type { EntityManager } from '@mikro-orm/postgresql';
import type { StatusListQuery, StatusFlagFilter } from '../../domain/statuses/status-query.ts';

export interface StatusRecord {
  readonly id: string;
  readonly status: string;
  readonly successful: boolean;
  readonly isGatewayLevelStatus: boolean;
  readonly isIssuerDecline: boolean;
  readonly isInsufficientFunds: boolean;
  readonly isInvalidCardDetails: boolean;
  readonly isOther: boolean;
}

/** The page envelope of spec 4.9 (without the transport's `success`). */
export interface StatusPage {
  readonly count: number;
  readonly totalCount: number;
  readonly pageNumber: number;
  readonly pageSize: number;
  readonly totalPages: number;
  readonly moreResults: boolean;
  readonly data: StatusRecord[];
}

const FLAG_COLUMNS: Record<StatusFlagFilter, string> = {
  successful: 'successful',
  isIssuerDecline: 'is_issuer_decline',
  isInsufficientFunds: 'is_insufficient_funds',
  isInvalidCardDetails: 'is_invalid_card_details',
  isOther: 'is_other',
};

interface StatusRow {
  id: number;
  status: string;
  successful: boolean;
  is_gateway_level_status: boolean;
  is_issuer_decline: boolean;
  is_insufficient_funds: boolean;
  is_invalid_card_details: boolean;
  is_other: boolean;
  total_count: string;
}

/**
 * Lists status codes ordered by id. Search matches the description case-insensitively or the id
 * as text; one query returns the page and the total (window count).
 */
export async function listStatuses(em: EntityManager, query: StatusListQuery): Promise<StatusPage> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (query.search !== undefined) {
    const pattern = `%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(`(status ilike ? or id::text like ?)`);
    params.push(pattern, pattern);
  }
  for (const [flag, value] of Object.entries(query.flags) as [StatusFlagFilter, boolean][]) {
    conditions.push(`${FLAG_COLUMNS[flag]} = ?`);
    params.push(value);
  }
  const where = conditions.length > 0 ? `where ${conditions.join(' and ')}` : '';
  const offset = (query.pageNumber - 1) * query.pageSize;
  const rows = await em.execute<StatusRow[]>(
    `select *, count(*) over () as total_count from status_codes ${where} order by id limit ? offset ?`,
    [...params, query.pageSize, offset],
  );
  const totalCount = rows.length > 0 ? Number(rows[0]!.total_count) : await countMatching(em, where, params);
  const totalPages = Math.ceil(totalCount / query.pageSize);
  return {
    count: rows.length,
    totalCount,
    pageNumber: query.pageNumber,
    pageSize: query.pageSize,
    totalPages,
    moreResults: query.pageNumber < totalPages,
    data: rows.map(toRecord),
  };
}

/** A page past the end has no rows to carry the window count; count separately then. */
async function countMatching(em: EntityManager, where: string, params: unknown[]): Promise<number> {
  const [row] = await em.execute<{ count: string }[]>(`select count(*) as count from status_codes ${where}`, params);
  return Number(row?.count ?? 0);
}

function toRecord(row: StatusRow): StatusRecord {
  return {
    id: String(row.id),
    status: row.status,
    successful: row.successful,
    isGatewayLevelStatus: row.is_gateway_level_status,
    isIssuerDecline: row.is_issuer_decline,
    isInsufficientFunds: row.is_insufficient_funds,
    isInvalidCardDetails: row.is_invalid_card_details,
    isOther: row.is_other,
  };
}
