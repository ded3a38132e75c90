import type { EntityManager } from '@mikro-orm/postgresql';
import { pageBranchCount, searchableCompanyIds, searchMitigationTransactions, type MitigationPage, type MitigationRecord } from '../../data/queries/mitigation.ts';
import { checkPageWork, type MitigationFilter } from '../../domain/mitigation/search.ts';

export interface MitigationSearchResult {
  readonly records: MitigationRecord[];
  /** Exact: one record more than the page was asked for and found. */
  readonly moreResults: boolean;
}

/**
 * The mitigation search of a tenant (spec 4.10), shared by REST (`pageNumber`) and GraphQL (cursor): the tenant's and
 * its child companies' transactions only; `companyIds` narrows within them and never reaches past them.
 */
export async function searchTransactions(em: EntityManager, request: { tenantId: number; filter: MitigationFilter; page: MitigationPage }): Promise<MitigationSearchResult> {
  const searchable = await searchableCompanyIds(em, request.tenantId);
  const asked = request.filter.companyIds;
  const companyIds = asked === undefined ? searchable : searchable.filter((id) => asked.includes(id));
  checkPageWork(pageBranchCount(companyIds.length, request.filter), { offset: 'offset' in request.page ? request.page.offset : 0, limit: request.page.limit + 1 });
  const records = await searchMitigationTransactions(em, { companyIds, filter: request.filter, page: { ...request.page, limit: request.page.limit + 1 } });
  return { records: records.slice(0, request.page.limit), moreResults: records.length > request.page.limit };
}
