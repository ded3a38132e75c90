/**
 * Independent parser for spec section 7.5 ("Transaction status codes
 * (`statusId`)") of shared/spec/interface.md. Used by the reference test to
 * check the hand-written literal in schema/reference/status-codes.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { StatusCodeDefinition, StatusGroup } from '../../domain/statuses/status-codes.ts';

/** Repo root: two levels up from test/support/. */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const SPEC_PATH = path.resolve(REPO_ROOT, '../shared/spec/interface.md');

export function readSpec(): string {
  if (!existsSync(SPEC_PATH)) {
    throw new Error(`Spec file not found at ${SPEC_PATH} (expected shared/spec/interface.md next to the repo)`);
  }
  return readFileSync(SPEC_PATH, 'utf8');
}

/** Leading label of each group paragraph -> group. Labels may carry a parenthetical before the colon. */
const GROUP_LABELS: ReadonlyArray<readonly [RegExp, StatusGroup]> = [
  [/^Successful(?:\s*\([^)]*\))?:\s+/, 'successful'],
  [/^Issuer declines(?:\s*\([^)]*\))?:\s+/, 'issuerDecline'],
  [/^Insufficient funds(?:\s*\([^)]*\))?:\s+/, 'insufficientFunds'],
  [/^Invalid card details(?:\s*\([^)]*\))?:\s+/, 'invalidCardDetails'],
  [/^Other \/ system errors(?:\s*\([^)]*\))?:\s+/, 'other'],
];

/** Entries where the parenthesis is a spec annotation, not part of the description. */
const ANNOTATION_EXCEPTIONS: ReadonlyMap<number, { annotated: string; status: string; isGatewayLevelStatus: boolean }> =
  new Map([
    [0, { annotated: 'None (no transaction logged)', status: 'None', isGatewayLevelStatus: false }],
    [1789, { annotated: 'Submitted (gateway-level submission status)', status: 'Submitted', isGatewayLevelStatus: true }],
  ]);

function extractSection(specMarkdown: string): string {
  const lines = specMarkdown.replace(/\r\n?/g, '\n').split('\n');
  const start = lines.findIndex((line) => /^###\s+7\.5\s/.test(line));
  if (start === -1) {
    throw new Error('Spec section "### 7.5 Transaction status codes" not found');
  }
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (/^#{1,6}\s/.test(lines[i]!)) {
      end = i;
      break;
    }
  }
  return lines.slice(start + 1, end).join('\n');
}

export function parseSpecStatusCodes(specMarkdown: string): StatusCodeDefinition[] {
  const section = extractSection(specMarkdown);
  const paragraphs = section
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, ' ').trim())
    .filter((p) => p.length > 0);

  const records: StatusCodeDefinition[] = [];
  const seenGroups = new Set<StatusGroup>();

  for (const paragraph of paragraphs) {
    const label = GROUP_LABELS.find(([re]) => re.test(paragraph));
    if (!label) {
      throw new Error(`Unrecognised paragraph in spec 7.5: ${paragraph.slice(0, 80)}...`);
    }
    const [labelRe, group] = label;
    if (seenGroups.has(group)) {
      throw new Error(`Group "${group}" appears more than once in spec 7.5`);
    }
    seenGroups.add(group);

    let body = paragraph.replace(labelRe, '');
    if (!body.endsWith('.')) {
      throw new Error(`Group "${group}" paragraph in spec 7.5 does not end with a period`);
    }
    body = body.slice(0, -1);

    for (const entry of body.split(/;\s+(?=\d+\s)/)) {
      const match = /^(\d+)\s+(.+)$/.exec(entry.trim());
      if (!match) {
        throw new Error(`Cannot parse entry "${entry}" in group "${group}" of spec 7.5`);
      }
      const id = Number(match[1]);
      let status = match[2]!.trim();
      let isGatewayLevelStatus = false;
      const exception = ANNOTATION_EXCEPTIONS.get(id);
      if (exception) {
        if (status !== exception.annotated) {
          throw new Error(`Code ${id}: expected annotated text "${exception.annotated}", found "${status}"`);
        }
        status = exception.status;
        isGatewayLevelStatus = exception.isGatewayLevelStatus;
      }
      records.push({ id, status, group, isGatewayLevelStatus });
    }
  }

  return records;
}
