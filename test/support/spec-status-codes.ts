/**
 * The status codes of the interface specification (section 7.5), as test data: an independent copy in
 * test/fixtures/interface-status-codes.json, taken from the spec text once and never generated from the
 * product's own table (domain/statuses/status-codes.ts). The tests compare the product's literal, its
 * seeded database rows and its `/api/admin/statuses` answers with this copy.
 */
import { readFileSync } from 'node:fs';

import type { StatusGroup } from '../../domain/statuses/status-codes.ts';

/** A status record as spec 2.7 describes it, with the numeric id. */
export interface SpecStatusCode {
  readonly id: number;
  readonly status: string;
  readonly successful: boolean;
  readonly isGatewayLevelStatus: boolean;
  readonly isIssuerDecline: boolean;
  readonly isInsufficientFunds: boolean;
  readonly isInvalidCardDetails: boolean;
  readonly isOther: boolean;
}

const FIXTURE = new URL('../fixtures/interface-status-codes.json', import.meta.url);

/** Every code of spec 7.5, in spec order. */
export const SPEC_STATUS_CODES: readonly SpecStatusCode[] = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { codes: SpecStatusCode[] }).codes;

/** The group flag of spec 2.7 that names each product group. */
export const GROUP_FLAG: Readonly<Record<StatusGroup, 'successful' | 'isIssuerDecline' | 'isInsufficientFunds' | 'isInvalidCardDetails' | 'isOther'>> = {
  successful: 'successful',
  issuerDecline: 'isIssuerDecline',
  insufficientFunds: 'isInsufficientFunds',
  invalidCardDetails: 'isInvalidCardDetails',
  other: 'isOther',
};

/** The one group a spec code belongs to (exactly one flag is set; the fixture test checks it). */
export function specGroupOf(code: SpecStatusCode): StatusGroup {
  const groups = (Object.keys(GROUP_FLAG) as StatusGroup[]).filter((group) => code[GROUP_FLAG[group]]);
  if (groups.length !== 1) throw new Error(`spec code ${code.id} has ${groups.length} group flags`);
  return groups[0]!;
}

/** The record `/api/admin/statuses` should answer for a spec code (spec 2.7: `id` is a string). */
export function asStatusRecord(code: SpecStatusCode): Record<string, unknown> {
  return { ...code, id: String(code.id) };
}
