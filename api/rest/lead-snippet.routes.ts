import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { PUBLIC } from '../http/security.ts';

/** Read once at start-up: it is small and changes only with a deployment. */
const SNIPPET = readFileSync(new URL('../assets/leads.js', import.meta.url), 'utf8');

const SNIPPET_SCHEMA = {
  operationId: 'customerLeadSnippet',
  summary: "The browser snippet that records a checkout's lead with the publishable key",
  description: 'Loaded by a script element of the checkout page; its header comment shows how it is called. Cached for 5 minutes.',
  tags: ['customer leads'],
  security: PUBLIC,
  response: { 200: { description: 'The script', content: { 'text/javascript': { schema: { type: 'string' } } } } },
};

/**
 * `GET /leads.js`: the dependency-free browser snippet that records a checkout's lead with the publishable key
 * (see its header comment). Any site may load it; what it may write is decided by the key's allowed origins.
 */
export function leadSnippetRoutes(app: FastifyInstance): void {
  app.get('/leads.js', { schema: SNIPPET_SCHEMA }, async (_request, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(SNIPPET),
  );
}
