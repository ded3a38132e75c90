import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isLeadOriginAllowed, type LeadKeyPrincipal } from '../../data/queries/lead-keys.ts';
import { listLeads } from '../../data/queries/leads.ts';
import { DomainError } from '../../domain/errors.ts';
import { leadJson } from '../../domain/leads/lead-json.ts';
import { parseLeadQuery } from '../../domain/leads/lead-query.ts';
import { authenticateLeadRead, authenticateLeadWrite, type LeadCredentials } from '../../services/leads/authenticate-lead-key.ts';
import { submitLead, type LeadWriteDeps } from '../../services/leads/submit-lead.ts';
import type { RateLimitPolicy } from '../http/authentication.ts';
import { LEAD_READ, LEAD_WRITE, PUBLIC } from '../http/security.ts';
import { sendLeadError } from './lead-errors.ts';
import { CustomerLead, LeadErrorAnswer, leadErrorResponses, LeadListAnswer, LeadQuerystring, LeadWriteAnswer, LeadWriteBody } from './lead-schemas.ts';
import { headerValue } from '../http/headers.ts';
import { LeadQueryError } from '../../domain/leads/lead-errors.ts';

export const LEADS_PATH = '/api/public/customer-leads';
/** Room for 500 scans and the pending data; the rest of the API keeps the gateway's limit. */
const LEAD_BODY_LIMIT_BYTES = 256 * 1024;
/** How long a browser may reuse a preflight answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

declare module 'fastify' {
  interface FastifyRequest {
    /** The lead key a lead request was authenticated with (set before its body is read). */
    leadPrincipal: LeadKeyPrincipal | null;
  }
}

function credentialsOf(request: FastifyRequest): LeadCredentials {
  return {
    authorization: headerValue(request.headers.authorization),
    publishableKey: headerValue(request.headers['x-service-lead-key']),
    origin: headerValue(request.headers.origin),
    clientAddress: request.ip,
  };
}

/** CORS headers of an answer the browser's script may read: its status, body and `Retry-After` (a 429's wait). */
function allowBrowserToRead(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', 'Retry-After');
}

/**
 * Whether a browser's refused write may be read by its page: a key refused as unknown, not allowed for the origin or
 * over its rate limit is told to a script on an origin the preflight lets through (some application allows it), so a
 * checkout sees `rate_limited` and its `Retry-After` instead of a network error. A 429 has already matched the key's
 * own allowed origins (the limit is counted only then), so it needs no look-up.
 */
async function browserMayReadRefusal(em: EntityManager, credentials: LeadCredentials, error: unknown): Promise<boolean> {
  if (credentials.authorization || !credentials.publishableKey || !credentials.origin || !(error instanceof DomainError)) return false;
  if (error.code === 'rate_limited') return true;
  return (error.code === 'unauthenticated' || error.code === 'forbidden') && (await isLeadOriginAllowed(em, credentials.origin));
}

/**
 * The customer-lead API (spec 4.3, 4.4): writes from browsers (publishable key, allowed `Origin`, CORS) and servers
 * (secret key), reads with the secret key only. Its failures use the lead envelope `{ok:false, error}`, so the
 * routes live in their own scope with their own error handler. Keys are checked before the body is read: an
 * unauthenticated caller learns nothing about its body. The route schemas document (OpenAPI); the domain parsers
 * validate, naming every bad field at once.
 */
/** The browser's CORS preflight of a lead write, as the OpenAPI document tells it (a browser sends it, not a client). */
const PREFLIGHT_SCHEMA = {
  operationId: 'preflightCustomerLeadWrite',
  summary: "A browser's CORS preflight of a lead write: allowed when some application allows its Origin",
  description:
    'Sent by the browser before a publishable-key write; it carries no key, so it is answered for the `Origin` alone. ' +
    "The write itself then checks the Origin against its key's application.",
  tags: ['customer leads'],
  security: PUBLIC,
  response: {
    204: {
      type: 'null',
      description: 'The Origin may write leads: the answer names it, the method and the headers a write may send',
      headers: {
        'access-control-allow-origin': { type: 'string', description: 'The request’s Origin, exactly (never `*`)' },
        'access-control-allow-methods': { type: 'string', description: '`POST`' },
        'access-control-allow-headers': { type: 'string', description: '`content-type, x-service-lead-key`' },
        'access-control-max-age': { type: 'string', description: 'Seconds the browser may keep this answer: 600' },
      },
    },
    ...leadErrorResponses(403),
  },
};

export function leadRoutes(app: FastifyInstance, deps: { rateLimit: RateLimitPolicy; leadWrites: LeadWriteDeps }): void {
  app.register(async (scope) => {
    scope.decorateRequest('leadPrincipal', null);
    scope.addSchema(CustomerLead);
    scope.addSchema(LeadErrorAnswer);
    scope.setValidatorCompiler(() => () => true);
    scope.setErrorHandler((error, request, reply) => sendLeadError(request, reply, error, LEAD_BODY_LIMIT_BYTES));
    // Answers differ by Origin (CORS headers), so caches must keep them apart.
    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('vary', 'Origin');
    });

    // The preflight carries no key, so it can only ask whether some application allows the origin; the write
    // itself then checks the origin against its key's application.
    scope.options(LEADS_PATH, { schema: PREFLIGHT_SCHEMA }, async (request, reply) => {
      const origin = headerValue(request.headers.origin);
      if (!origin || !(await isLeadOriginAllowed(request.em, origin))) throw new DomainError('forbidden', 'This origin may not write leads');
      return reply
        .status(204)
        .header('access-control-allow-origin', origin)
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'content-type, x-service-lead-key')
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
        .send();
    });

    scope.post(LEADS_PATH, {
      bodyLimit: LEAD_BODY_LIMIT_BYTES,
      schema: {
        operationId: 'writeCustomerLead',
        summary: 'Creates the lead of a checkout session (201) or updates it (200) (spec 4.3)',
        tags: ['customer leads'],
        security: LEAD_WRITE,
        body: LeadWriteBody,
        response: { 200: LeadWriteAnswer, 201: LeadWriteAnswer, ...leadErrorResponses(400, 401, 403, 422, 429, 500, 503) },
      },
      onRequest: async (request, reply) => {
        const credentials = credentialsOf(request);
        let principal: LeadKeyPrincipal;
        try {
          principal = await authenticateLeadWrite(credentials, deps.rateLimit);
        } catch (error) {
          if (await browserMayReadRefusal(request.em, credentials, error)) allowBrowserToRead(reply, credentials.origin!);
          throw error;
        }
        // From here on the browser may read the answer, failures included (422 names its fields).
        if (principal.kind === 'publishable') allowBrowserToRead(reply, credentials.origin!);
        request.leadPrincipal = principal;
      },
      handler: async (request, reply) => {
        // This scope validates nothing through Fastify (the lead rules name every bad field at once): the write takes
        // no query parameters, and refuses any, as the read refuses one it does not know.
        const unknownParameters = Object.keys(request.query as Record<string, unknown>);
        if (unknownParameters.length > 0) throw new LeadQueryError(unknownParameters.map((name) => `${name}: unknown query parameter`));
        const lead = await submitLead(deps.leadWrites, request.leadPrincipal!, request.body);
        return reply.status(lead.created ? 201 : 200).send({
          ok: true as const,
          data: { id: lead.id, session_id: lead.sessionId, status: lead.status, created_at: lead.createdAt.toISOString(), updated_at: lead.updatedAt.toISOString() },
        });
      },
    });

    scope.get(LEADS_PATH, {
      schema: {
        operationId: 'listCustomerLeads',
        summary: "The tenant's leads of the key's environment (a test key reads test leads), most recently updated first; filters combine with AND (spec 4.4)",
        tags: ['customer leads'],
        security: LEAD_READ,
        querystring: LeadQuerystring,
        response: { 200: LeadListAnswer, ...leadErrorResponses(400, 401, 403, 429, 500, 503) },
      },
      // Before the query string is looked at, as a write's key before its body: 401 comes first.
      onRequest: async (request) => {
        request.leadPrincipal = await authenticateLeadRead(credentialsOf(request), deps.rateLimit);
      },
      handler: async (request) => {
        const { filter, limit } = parseLeadQuery(request.query as Record<string, unknown>);
        // A test key reads test leads only: test keys travel further (staging, CI, developers' machines) than live ones.
        const { tenantId, environment } = request.leadPrincipal!;
        const leads = await listLeads(request.em, { tenantId, environment, filter, limit });
        return { ok: true as const, data: leads.map(leadJson) };
      },
    });
  });
}
