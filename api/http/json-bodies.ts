import { errorCodes, type FastifyInstance } from 'fastify';
import { bodyMayBeLeftOutOn } from './no-parameters.ts';
import { DuplicateKeyError } from './duplicate-keys.ts';
import { firstDuplicateKey } from '../../domain/validation/duplicate-keys.ts';
import { ReservedKeyError } from './reserved-keys.ts';
import { InexactNumberError, parseExactWholeNumbers } from './whole-numbers.ts';

/** JSON is UTF-8 (RFC 8259): a byte sequence that is not is refused, never read with U+FFFD in its place. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * How the scope reads JSON bodies: as UTF-8, strictly (a body that is not UTF-8 is not JSON: `inv\xff@x.co` was
 * stored as `inv\uFFFD@x.co`, a session no longer the caller's), then with Fastify's own parser (malformed JSON
 * refused, and keys that would reach a prototype), a body refused only for such a key told as that
 * (`ReservedKeyError`), a body giving one field twice in an object refused naming it (`DuplicateKeyError`), and,
 * where asked, a body holding a number that is not exactly the whole number it reads as refused naming its field
 * (`InexactNumberError`), never taken rounded.
 */
export function readJsonBodies(scope: FastifyInstance, options: { inexactWholeNumbers?: boolean } = {}): void {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // An empty body where a route takes none (a capture, a void): read as no body, not as malformed JSON.
    if ((body as Buffer).length === 0 && bodyMayBeLeftOutOn(request)) return done(null, undefined);
    let text: string;
    try {
      // A byte order mark is kept: Fastify's parser skips one, as it always did.
      text = UTF8.decode(body as Buffer);
    } catch {
      return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    }
    parseJson(request, text, (error: Error | null, parsed: unknown) => {
      if (error) return done(isJson(text) ? new ReservedKeyError() : error, undefined);
      const refusal = duplicateKeyRefusal(withoutByteOrderMark(text));
      if (refusal) return done(refusal, undefined);
      // Read again with the reviver, which Fastify's parser takes none of (without the one byte order mark it skipped).
      if (!options.inexactWholeNumbers) return done(null, parsed);
      let exact: unknown;
      try {
        exact = parseExactWholeNumbers(withoutByteOrderMark(text));
      } catch (refusal) {
        // A body too deep for the second reading (its reviver recurses) is valid JSON: told so, not "not valid JSON".
        return done(refusal instanceof InexactNumberError ? refusal : new BodyTooDeepError(), undefined);
      }
      done(null, exact);
    });
  });
}

/** A body nesting objects or arrays deeper than it can be read (thousands of levels); no field of this API nests so. */
export class BodyTooDeepError extends Error {
  readonly statusCode = 400;
  constructor() {
    super('The body nests objects or arrays too deeply to be read (no field of this API nests more than a few levels)');
    this.name = 'BodyTooDeepError';
  }
}

/**
 * The refusal of a body that gives a field twice in one object. A body nested deeper than the walk can go (thousands of
 * levels, which `JSON.parse` reads) is left to the routes, which refuse such nesting naming the field (e-mail `data`
 * and a lead's free-form fields past 32 levels; a submit's `props` and `/payments`' `metadata` are flat; GraphQL
 * variables take the shape of their input types).
 */
function duplicateKeyRefusal(text: string): Error | undefined {
  let path: string | undefined;
  try {
    path = firstDuplicateKey(text);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    return new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
  return path === undefined ? undefined : new DuplicateKeyError(path);
}

/** Whether the text parses as JSON at all (asked only of a body Fastify's parser refused). */
function isJson(text: string): boolean {
  try {
    JSON.parse(withoutByteOrderMark(text));
    return true;
  } catch {
    return false;
  }
}

/** The text without the one leading byte order mark Fastify's parser skips. */
function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
