import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { GraphQLSchema } from 'graphql';
import { authenticateApiKey } from '../services/auth/authenticate-api-key.ts';
import { authorizeAdmin, type AdminCaller } from '../domain/auth/api-key.ts';
import { consumeRateLimit } from '../services/rate-limit/rate-limiter.ts';
import { createQueryAjv, createStrictAjv } from '../domain/validation/json-schema.ts';
import { gatewayBaseUrl } from '../platform/config.ts';
import type { GatewayDeps, GatewayServices } from './gateway-deps.ts';
import { mountGraphQL } from './graphql/apollo.ts';
import { buildGatewaySchema } from './graphql/schema.ts';
import { sendError } from './http/errors.ts';
import { buildOpenApiDocument } from './http/openapi.ts';
import type { RouteDefinition } from './http/route.ts';
import { healthRoutes } from './rest/health.routes.ts';
import { statusRoutes } from './rest/statuses.routes.ts';
import { paymentRoutes, threeDSecureChallengeRoute } from './rest/payments.routes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** One entity manager per request, never the global one. */
    em: EntityManager;
    /** Set by admin authentication. */
    admin?: AdminCaller;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Builds the gateway: REST compatibility routes, /graphql, health and the OpenAPI document. */
export async function buildGateway(deps: GatewayDeps, options: { schema?: GraphQLSchema } = {}): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimitBytes,
    genReqId: (request) => {
      const given = headerValue(request.headers['x-request-id']);
      return given && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true },
  });

  const strictAjv = createStrictAjv();
  const queryAjv = createQueryAjv();
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'querystring' ? queryAjv.compile(schema) : strictAjv.compile(schema)));
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler((request, reply) => reply.status(404).send({ success: false, message: `No route ${request.method} ${request.url.split('?')[0]}` }));

  app.decorateRequest('em', null as unknown as EntityManager);
  app.addHook('onRequest', async (request, reply) => {
    request.em = deps.orm.em.fork();
    reply.header('x-request-id', request.id);
  });

  const routes: RouteDefinition[] = [
    ...healthRoutes(deps.readiness),
    ...statusRoutes,
    threeDSecureChallengeRoute,
    ...paymentRoutes({
      runner: deps.paymentRunner,
      cardVault: deps.cardVault,
      secretBox: deps.secretBox,
      defaultRateLimitPerMinute: config.rateLimitPerMinute,
      settings: {
        processorTimeoutMs: config.processorTimeoutMs,
        threeDSecureTimeoutSeconds: config.threeDSecureTimeoutSeconds,
        webhookSchedule: config.webhookRetrySchedule,
        webhookTimeoutMs: config.webhookTimeoutMs,
      },
    }),
  ];
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      // Headers are documented, not schema-validated: a missing key must be 401, not 400.
      schema: Object.fromEntries(
        (['params', 'querystring', 'body'] as const).filter((part) => route.schema[part]).map((part) => [part, route.schema[part]]),
      ),
      preHandler: route.auth === 'admin' ? authenticateAdmin : undefined,
      handler: route.handler,
    });
  }

  async function authenticateAdmin(request: FastifyRequest) {
    const principal = await authenticateApiKey(request.em, request.headers.authorization);
    await consumeRateLimit(request.em, `api-key:${principal.apiKeyId}`, principal.rateLimitPerMinute ?? config.rateLimitPerMinute);
    request.admin = authorizeAdmin(principal, headerValue(request.headers.clientid), headerValue(request.headers.useremail));
  }

  const openApi = buildOpenApiDocument(routes, { title: 'Payments gateway', version: '0.1.0', serverUrl: gatewayBaseUrl(config) });
  app.get('/openapi.json', async () => openApi);

  const services: GatewayServices = {
    operatorToken: config.operatorToken,
    defaultRateLimitPerMinute: config.rateLimitPerMinute,
    secretBox: deps.secretBox,
    cardVault: deps.cardVault,
    deliveryStarter: deps.deliveryStarter,
  };
  await mountGraphQL(app, options.schema ?? (await buildGatewaySchema()), services);
  return app;
}
