/**
 * Fastify set up so that no answer can quote a request value, and so never a card number or CVV:
 * own body parsers (the default JSON parser's error message can quote the body) and an error handler
 * that answers only messages written to be safe.
 */
import type { FastifyInstance } from 'fastify';

/** An error whose message is safe to answer (it never quotes request values). */
export class SandboxHttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

export function installSafeHttp(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new SandboxHttpError(400, 'malformed JSON body'), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });

  app.setErrorHandler((error: { statusCode?: number; code?: string }, _request, reply) => {
    const statusCode = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
    if (error instanceof SandboxHttpError) return reply.code(statusCode).send({ error: error.message });
    return reply.code(statusCode).send({ error: statusCode >= 500 ? 'internal_error' : (error.code ?? 'bad_request') });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'not_found' }));
}
