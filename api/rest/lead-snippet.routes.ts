import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/** Read once at start-up: it is small and changes only with a deployment. */
const SNIPPET = readFileSync(new URL('../assets/leads.js', import.meta.url), 'utf8');

/**
 * `GET /leads.js`: the dependency-free browser snippet that records a checkout's lead with the publishable key
 * (see its header comment). Any site may load it; what it may write is decided by the key's allowed origins.
 */
export function leadSnippetRoutes(app: FastifyInstance): void {
  app.get('/leads.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(SNIPPET),
  );
}
