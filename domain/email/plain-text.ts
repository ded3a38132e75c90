import { unstableToPlainText } from '@react-email/render';
import { decodeHTMLAttribute } from 'entities';
import { parse, SyntaxKind, type INode } from 'html5parser';

/**
 * What the plain-text part's converter (React Email's single-pass one, `unstableToPlainText`) takes in bounded time.
 * Each level of a quote or list item prefixes every line inside it once more, so its work and its output grow with
 * content × depth (1 MiB of HTML in 16 quotes: a second of blocked worker and 6 MB of text; 8 levels stay near the
 * flat document's quarter second); and a list numbered from beyond 2^53 never ends (its counter stops counting).
 */
export const PLAIN_TEXT_LIMITS = { maxPrefixedDepth: 8, maxListStart: 1_000_000_000 } as const;

/** Elements whose every line the converter prefixes (`> `, ` * `, ` 1. `). */
const PREFIXING = new Set(['blockquote', 'li']);

export class UnconvertibleHtmlError extends Error {
  constructor(readonly problem: string) {
    super(`The HTML cannot be made into a plain-text part: ${problem}`);
    this.name = 'UnconvertibleHtmlError';
  }
}

/**
 * Why the HTML's plain-text part could not be made in bounded time, or undefined. Parsed by the converter's own
 * parser (html5parser) and walked without recursion, so a document of any depth is read in linear time.
 */
export function plainTextProblem(html: string): string | undefined {
  const stack: { nodes: readonly INode[]; index: number; prefixed: number }[] = [{ nodes: parse(html), index: 0, prefixed: 0 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const node = frame.nodes[frame.index++];
    if (node === undefined) {
      stack.pop();
      continue;
    }
    if (node.type !== SyntaxKind.Tag) continue;
    const name = node.name.toLowerCase();
    if (name === 'ol') {
      // Every `start` is read, as the converter reads one (entities decoded, then parseInt): of several, the converter
      // takes the last (an attribute map), so checking only one let `start="1" start="9007199254740992"` through.
      for (const attribute of node.attributes) {
        if (attribute.name.value.toLowerCase() !== 'start') continue;
        const number = Number.parseInt(decodeHTMLAttribute(attribute.value?.value ?? '1'), 10);
        if (Math.abs(number) > PLAIN_TEXT_LIMITS.maxListStart) return `a list starts at ${String(number).slice(0, 30)} (at most ${PLAIN_TEXT_LIMITS.maxListStart})`;
      }
    }
    const prefixed = frame.prefixed + (PREFIXING.has(name) ? 1 : 0);
    if (prefixed > PLAIN_TEXT_LIMITS.maxPrefixedDepth) return `quotes and list items nest more than ${PLAIN_TEXT_LIMITS.maxPrefixedDepth} deep`;
    if (node.body) stack.push({ nodes: node.body, index: 0, prefixed });
  }
  return undefined;
}

/** The plain-text part of an e-mail's HTML; throws UnconvertibleHtmlError rather than converting what would not end. */
export function plainTextOf(html: string): string {
  const problem = plainTextProblem(html);
  if (problem !== undefined) throw new UnconvertibleHtmlError(problem);
  return unstableToPlainText(html);
}
