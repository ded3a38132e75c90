import type { FastifyInstance } from 'fastify';

/** A `charset` parameter of a `Content-Type` header, lower case; undefined when none is declared. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;
const UTF_8 = new Set(['utf-8', 'utf8']);

/**
 * Bodies are read as sent: a body declaring a content coding (`gzip`, anything but `identity`) is refused with the
 * route's 415, as a body of another media type is, rather than parsed as if plain (a `gzip` body then failed as
 * invalid JSON, an unknown coding was read as JSON and acted on). So is one declaring a character set other than
 * UTF-8, JSON's own (RFC 8259): it was read as UTF-8 whatever it said, so `é` sent in ISO-8859-1 was refused as
 * invalid JSON at best, and text in another charset could be read as something else.
 */
export function refuseEncodedBodies(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const coding = request.headers['content-encoding'];
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (coding === undefined && charset === undefined) return;
    // A request without a body (a GET, a preflight) has nothing encoded, whatever the header says.
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    if (!hasBody) return;
    if (charset !== undefined && !UTF_8.has(charset)) throw new UnsupportedContentEncoding('Content-Type charset must be utf-8: JSON is sent as UTF-8');
    if (coding === undefined) return;
    const codings = (Array.isArray(coding) ? coding.join(',') : coding).split(',').map((part) => part.trim().toLowerCase()).filter(Boolean);
    if (codings.every((part) => part === 'identity')) return;
    throw new UnsupportedContentEncoding('Content-Encoding is not supported: send the body uncompressed');
  });
}

/** Fastify's code for a body of a media type no parser takes: every route's error mapper answers it 415 in its shape. */
export class UnsupportedContentEncoding extends Error {
  readonly code = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';
  readonly statusCode = 415;
}

/** What a 415 says: the coding or charset refused, or the media type. */
export function unsupportedMediaMessage(error: unknown, mediaTypeMessage: string): string {
  return error instanceof UnsupportedContentEncoding ? error.message : mediaTypeMessage;
}
