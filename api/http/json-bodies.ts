import type { FastifyInstance } from 'fastify';
import { ReservedKeyError } from './reserved-keys.ts';
import { keepInexactWholeNumbers } from './whole-numbers.ts';

/**
 * How the scope reads JSON bodies: with Fastify's own parser (malformed JSON refused, and keys that would reach a
 * prototype), a body refused only for such a key told as that (`ReservedKeyError`), and, where asked, a number that
 * is not exactly the whole number it reads as kept as an `InexactNumber` (see `keepInexactWholeNumbers`), so that a
 * field typed integer refuses it instead of taking a rounded value.
 */
export function readJsonBodies(scope: FastifyInstance, options: { inexactWholeNumbers?: boolean } = {}): void {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    parseJson(request, text, (error: Error | null, parsed: unknown) => {
      if (error) return done(isJson(text) ? new ReservedKeyError() : error, undefined);
      // Read again with the reviver (Fastify's parser takes none); without the byte order mark its parser skipped.
      done(null, options.inexactWholeNumbers ? JSON.parse(text.replace(/^\uFEFF/, ''), keepInexactWholeNumbers) : parsed);
    });
  });
}

/** Whether the text parses as JSON at all (asked only of a body Fastify's parser refused). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return text.length > 0;
  } catch {
    return false;
  }
}
