import type { FastifyInstance } from 'fastify';

/**
 * Bodies are read as sent: a body declaring a content coding (`gzip`, anything but `identity`) is refused with the
 * route's 415, as a body of another media type is, rather than parsed as if plain (a `gzip` body then failed as
 * invalid JSON, an unknown coding was read as JSON and acted on).
 */
export function refuseEncodedBodies(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const coding = request.headers['content-encoding'];
    if (coding === undefined) return;
    // A request without a body (a GET, a preflight) has nothing encoded, whatever the header says.
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    if (!hasBody) return;
    const codings = (Array.isArray(coding) ? coding.join(',') : coding).split(',').map((part) => part.trim().toLowerCase()).filter(Boolean);
    if (codings.every((part) => part === 'identity')) return;
    throw new UnsupportedContentEncoding();
  });
}

/** Fastify's code for a body of a media type no parser takes: every route's error mapper answers it 415 in its shape. */
export class UnsupportedContentEncoding extends Error {
  readonly code = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';
  readonly statusCode = 415;
  constructor() {
    super('Content-Encoding is not supported: send the body uncompressed');
  }
}

/** What a 415 says: the coding refused, or the media type. */
export function unsupportedMediaMessage(error: unknown, mediaTypeMessage: string): string {
  return error instanceof UnsupportedContentEncoding ? error.message : mediaTypeMessage;
}
