import { createHash } from 'node:crypto';
import Handlebars from 'handlebars';

/**
 * Caller-supplied HTML templates (`templateType: string`) with Handlebars, the syntax the interface shows
 * (DESIGN 4): `{{variable}}` is HTML-escaped, `{{{variable}}}` inserts raw HTML, dotted paths read nested
 * data, a missing variable renders empty, `{{#if}}` is false for missing, null, false, '', 0 and [].
 *
 * Only `{{#if}}`/`{{else}}` blocks are allowed, and since they keep the context, no parent path (`{{../x}}`). Partials (`{{> name}}`) are refused: they are how a template
 * would load another template, and no template may come from anywhere but the request. The compiler runs
 * with `knownHelpersOnly` in an isolated Handlebars environment with nothing registered, so a template can
 * call no helper that was not known when it was checked.
 */
export interface StringTemplateLimits {
  /** Characters of template content. */
  readonly maxLength: number;
  /** Nodes of the parsed template: bounds the compile and render work of one template. */
  readonly maxNodes: number;
  /** Nesting of blocks. */
  readonly maxDepth: number;
  /** Longest a compile may take (parse, checks, first run); a slower template is refused (and not cached) as too complex. */
  readonly maxCompileMs: number;
  /**
   * Characters of the rendered HTML. The source is bounded but one `{{a}}` repeated thousands of times with a
   * long `a` is not: without this bound a 100 KiB template and a 30 KiB value render hundreds of megabytes.
   */
  readonly maxRenderedLength: number;
}

/**
 * The node and depth bounds are what keep every accepted template cheap, deterministically; the time limit is a
 * backstop against a pathological case they miss, set far above a normal compile (well under 5 ms) so that a
 * busy machine never refuses a valid template.
 */
export const STRING_TEMPLATE_LIMITS: StringTemplateLimits = { maxLength: 100 * 1024, maxNodes: 5_000, maxDepth: 20, maxCompileMs: 1_000, maxRenderedLength: 1024 * 1024 };

/** Thrown (never rendered) when a template would render more than `maxRenderedLength` characters with the data. */
export class RenderedTooLargeError extends Error {
  constructor(readonly bound: number, readonly limit: number) {
    super(`renders to more than ${limit} characters with this data (up to ${bound})`);
    this.name = 'RenderedTooLargeError';
  }
}

/**
 * Renders the template with the data; throws RenderedTooLargeError before rendering anything when the output
 * could exceed the limit. `renderedLengthBound` is that bound: an upper bound of the output's length, computed
 * from the syntax tree and the data without building the output.
 */
export type CompiledStringTemplate = ((data: Record<string, unknown>) => string) & { renderedLengthBound(data: Record<string, unknown>): number };

export interface StringTemplateCompiler {
  /** The compiled template, or the reason it is refused (a sentence for the caller). */
  compile(content: string): CompiledStringTemplate | { readonly problem: string };
  readonly cacheSize: number;
}

const ALLOWED_BLOCKS = new Set(['if']);
const BUILT_IN_HELPERS = new Set(['if', 'unless', 'each', 'with', 'lookup', 'log', 'helperMissing', 'blockHelperMissing']);

/** Handlebars' parse errors span lines (source excerpt, caret, expectation): one line for a JSON answer. */
const oneLine = (message: string) => message.replace(/\s+/g, ' ').trim().slice(0, 300);

type Node = hbs.AST.Node & { [key: string]: unknown };

/** Walks the template's syntax tree, refusing what the rules forbid; returns a problem or undefined. */
function checkTree(program: hbs.AST.Program, limits: StringTemplateLimits): string | undefined {
  let nodes = 0;
  const pending: { node: Node; depth: number }[] = [{ node: program as unknown as Node, depth: 0 }];
  while (pending.length > 0) {
    const { node, depth } = pending.pop()!;
    if (++nodes > limits.maxNodes) return `is too complex (more than ${limits.maxNodes} parts)`;
    if (depth > limits.maxDepth) return `nests blocks deeper than ${limits.maxDepth} levels`;
    switch (node.type) {
      case 'PartialStatement':
      case 'PartialBlockStatement':
        return 'uses a partial ({{> ...}}): loading templates from files or other templates is not supported; send the whole HTML in templateContent';
      case 'DecoratorBlock':
      case 'Decorator':
        return 'uses a decorator, which is not supported';
      case 'BlockStatement': {
        const name = ((node.path as Node).original as string | undefined) ?? '';
        if (!ALLOWED_BLOCKS.has(name)) return `uses the block {{#${name}}}; only {{#if}}...{{else}}...{{/if}} is supported`;
        break;
      }
      case 'PathExpression':
        // `{{#if}}` keeps the context, so `../` always reads above the data: it could only ever render nothing.
        if (((node.depth as number | undefined) ?? 0) > 0) return `reads a parent context ({{${(node.original as string | undefined) ?? '../'}}}); read the variable by its own name: {{#if}} does not change the context`;
        break;
      case 'MustacheStatement':
      case 'SubExpression': {
        const path = node.path as Node;
        const name = (path.original as string | undefined) ?? '';
        const params = (node.params as unknown[] | undefined) ?? [];
        if (params.length > 0 || (node.hash as unknown) || (path.type === 'PathExpression' && BUILT_IN_HELPERS.has(name))) {
          return `calls a helper ({{${name} ...}}); only {{variable}} and {{#if variable}} are supported`;
        }
        break;
      }
    }
    // Only a block's own programs count as nesting; the rest of the tree is a flat list of statements.
    const childDepth = node.type === 'BlockStatement' ? depth + 1 : depth;
    for (const value of Object.values(node)) {
      const children = Array.isArray(value) ? value : [value];
      for (const child of children) {
        if (child && typeof child === 'object' && typeof (child as Node).type === 'string') pending.push({ node: child as Node, depth: childDepth });
      }
    }
  }
  return undefined;
}

/** Characters `String(value)` takes once HTML-escaped the way Handlebars escapes (`&<>"'\`=`). */
function escapedLength(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    switch (text.charCodeAt(i)) {
      case 38: // &amp;
        length += 4;
        break;
      case 60: // &lt;
      case 62: // &gt;
        length += 3;
        break;
      case 34: // &quot;
      case 39: // &#x27;
      case 96: // &#x60;
      case 61: // &#x3D;
        length += 5;
        break;
    }
  }
  return length;
}

/** An own property only (a string's `length` and characters included): Handlebars (prototype access off) never reads inherited ones. */
function own(value: unknown, key: string): unknown {
  if (value === null || value === undefined) return undefined;
  const object = Object(value) as Record<string, unknown>;
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** What a `{{path}}` prints for a value: nothing for null and undefined, else its string form, escaped or raw. */
function printedLength(value: unknown, escaped: boolean): number {
  if (value === undefined || value === null) return 0;
  let text: string;
  try {
    text = String(value);
  } catch {
    // `{"toString": "x"}` has no string form: Handlebars fails on it too, so it never adds to the output.
    return 0;
  }
  return escaped ? escapedLength(text) : text.length;
}

/**
 * An upper bound of the characters the checked template (text, `{{path}}`, `{{{path}}}`, `{{#if}}`, comments)
 * renders with the data. Only `{{#if}}` blocks exist and they do not change the context, so every path is read
 * from the data's root; of a block's two branches the longer counts (the condition is not evaluated). A path the
 * bound cannot resolve exactly (`../x`, a literal) counts as the longest printable value of the data.
 */
function renderedLengthBound(program: hbs.AST.Program, data: Record<string, unknown>): number {
  let longestValue: number | undefined;
  const longest = (): number => {
    if (longestValue !== undefined) return longestValue;
    let max = 0;
    const pending: unknown[] = [data];
    while (pending.length > 0) {
      const value = pending.pop();
      max = Math.max(max, printedLength(value, true));
      if (value !== null && typeof value === 'object') pending.push(...Object.values(value));
    }
    return (longestValue = max);
  };
  const statementLength = (node: hbs.AST.Statement): number => {
    switch (node.type) {
      case 'ContentStatement':
        return (node as hbs.AST.ContentStatement).value.length;
      case 'MustacheStatement': {
        const mustache = node as hbs.AST.MustacheStatement;
        const path = mustache.path as hbs.AST.PathExpression;
        if (path.type !== 'PathExpression' || path.depth > 0) return longest();
        let parts = path.parts;
        if (path.data) {
          if (parts[0] !== 'root') return 0;
          parts = parts.slice(1);
        }
        let value: unknown = data;
        for (const part of parts) value = own(value, part);
        return printedLength(value, mustache.escaped);
      }
      case 'BlockStatement': {
        const block = node as hbs.AST.BlockStatement;
        return Math.max(block.program ? programLength(block.program) : 0, block.inverse ? programLength(block.inverse) : 0);
      }
      default:
        return 0;
    }
  };
  const programLength = (p: hbs.AST.Program): number => p.body.reduce((sum, statement) => sum + statementLength(statement), 0);
  return programLength(program);
}

/**
 * A compiler whose compiled templates are cached by content hash (SHA-256), least recently used out first,
 * so a store sending the same template thousands of times compiles it once per process.
 */
export function createStringTemplateCompiler(options: { limits?: StringTemplateLimits; cacheEntries?: number; now?: () => number } = {}): StringTemplateCompiler {
  const limits = options.limits ?? STRING_TEMPLATE_LIMITS;
  const cacheEntries = options.cacheEntries ?? 500;
  const now = options.now ?? (() => performance.now());
  const handlebars = Handlebars.create();
  const cache = new Map<string, CompiledStringTemplate>();

  function compileUncached(content: string): CompiledStringTemplate | { problem: string } {
    if (content.length > limits.maxLength) return { problem: `is longer than ${limits.maxLength} characters` };
    const started = now();
    let tree: hbs.AST.Program;
    try {
      tree = handlebars.parse(content);
    } catch (error) {
      return { problem: `is not a valid template: ${oneLine((error as Error).message)}` };
    }
    const problem = checkTree(tree, limits);
    if (problem) return { problem };
    const template = handlebars.compile(tree, { knownHelpersOnly: true, knownHelpers: { if: true }, strict: false, noEscape: false });
    // Compiling is lazy: run it once now (empty data), so its cost is measured here and errors surface here.
    try {
      template({}, { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false });
    } catch (error) {
      return { problem: `is not a valid template: ${oneLine((error as Error).message)}` };
    }
    if (now() - started > limits.maxCompileMs) return { problem: `took longer than ${limits.maxCompileMs} ms to compile` };
    const bound = (data: Record<string, unknown>) => renderedLengthBound(tree, data);
    return Object.assign(
      (data: Record<string, unknown>) => {
        const length = bound(data);
        if (length > limits.maxRenderedLength) throw new RenderedTooLargeError(length, limits.maxRenderedLength);
        return template(data, { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false });
      },
      { renderedLengthBound: bound },
    );
  }

  return {
    compile(content) {
      const key = createHash('sha256').update(content).digest('hex');
      const cached = cache.get(key);
      if (cached) {
        cache.delete(key);
        cache.set(key, cached);
        return cached;
      }
      const compiled = compileUncached(content);
      if (typeof compiled === 'function') {
        cache.set(key, compiled);
        if (cache.size > cacheEntries) cache.delete(cache.keys().next().value!);
      }
      return compiled;
    },
    get cacheSize() {
      return cache.size;
    },
  };
}
