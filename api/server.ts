import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { GraphQLSchema } from 'graphql';
import { poolExecutor } from '../data/sql-executor.ts';
import { censorCardNumbers } from '../platform/logger.ts';
import type { GatewayDeps, GatewayServices } from './gateway-deps.ts';
import { mountGraphQL } from './graphql/apollo.ts';
import { buildGatewaySchema } from './graphql/schema.ts';
import { useSchemaCompilers } from './http/compilers.ts';
import { sendError } from './http/errors.ts';
import { readJsonBodies } from './http/json-bodies.ts';
import { refuseEncodedBodies } from './http/content-encoding.ts';
import { refuseHostileText } from './http/hostile-input.ts';
import { refuseRequestsWhileClosing } from './http/closing.ts';
import { trackRequestsInFlight, type RequestsInFlight } from './http/requests-in-flight.ts';
import { maskCardNumbersInErrorAnswers } from './http/card-numbers-in-answers.ts';
import { answerFrameworkErrors, answerUnknownRoutes, MAX_PATH_PARAMETER_LENGTH } from './http/method-not-allowed.ts';
import { requireDocumentedApiKeys } from './http/authentication.ts';
import { registerOpenApi } from './http/openapi.ts';
import { ErrorResponse } from './http/schemas.ts';
import { healthRoutes } from './rest/health.routes.ts';
import { indexRoutes } from './rest/index.routes.ts';
import { paymentRoutes } from './rest/payments.routes.ts';
import { paymentsApiRoutes } from './rest/payments-api.routes.ts';
import { subscriptionRoutes } from './rest/subscriptions.routes.ts';
import { leadSnippetRoutes } from './rest/lead-snippet.routes.ts';
import { leadRoutes } from './rest/leads.routes.ts';
import { emailRoutes } from './rest/email.routes.ts';
import { createStringTemplateCompiler } from '../domain/email/string-templates.ts';
import { statusRoutes } from './rest/statuses.routes.ts';
import { adminRoutes } from './rest/admin.routes.ts';
import { mitigationRoutes } from './rest/mitigation.routes.ts';
import { paymentApiUnknownRoute } from './rest/payments-api-errors.ts';
import { emailUnknownRoute } from './rest/email-errors.ts';
import { leadUnknownRoute } from './rest/lead-errors.ts';
import { graphQLUnknownRoute } from './graphql/transport-errors.ts';
import { answerClientError } from './http/client-errors.ts';
import { headerValue } from './http/headers.ts';
import { refuseUndocumentedQueryParameters } from './http/no-parameters.ts';
import { abandonedActionAfterSeconds } from '../services/idempotency/idempotent-action.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** One entity manager per request, never the global one. */
    em: EntityManager;
  }
  interface FastifyInstance {
    /** What the gateway's stop waits for before it closes the pools and Temporal. */
    requestsInFlight: RequestsInFlight;
  }
}

/** Paths whose API answers its refusals in a shape of its own. */
const UNKNOWN_ROUTE_SHAPES = [paymentApiUnknownRoute, emailUnknownRoute, leadUnknownRoute, graphQLUnknownRoute];

/** Builds the gateway: REST compatibility routes, /graphql, health, the OpenAPI document and its reference page. */
export async function buildGateway(deps: GatewayDeps, options: { schema?: GraphQLSchema } = {}): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimitBytes,
    // Only the proxies named: anyone can send X-Forwarded-For, so an untrusted one is never read.
    trustProxy: config.trustedProxies ?? false,
    genReqId: (request) => {
      const given = headerValue(request.headers['x-request-id']);
      // A caller's id is logged with every line of its request and sent back: one holding a card number is not taken.
      return given && /^[\w.-]{1,100}$/.test(given) && censorCardNumbers(given) === given ? given : randomUUID();
    },
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    frameworkErrors: answerFrameworkErrors({ shapes: UNKNOWN_ROUTE_SHAPES }),
    clientErrorHandler: answerClientError,
    // Answered by `refuseRequestsWhileClosing`, in each API's own shape and with `Retry-After`.
    return503OnClosing: false,
  });

  app.decorate('requestsInFlight', trackRequestsInFlight(app));
  refuseRequestsWhileClosing(app);
  maskCardNumbersInErrorAnswers(app);
  useSchemaCompilers(app);
  const answerUnknownRoute = answerUnknownRoutes(app, { shapes: UNKNOWN_ROUTE_SHAPES });
  // A request that reached no route is answered as such (404 or 405), whatever its body or headers got wrong first.
  app.setErrorHandler((error, request, reply) => (request.is404 ? answerUnknownRoute(request, reply) : sendError(request, reply, error)));
  // Every body this API takes is JSON: other media types are 415, not parsed as text and refused later as a 400.
  app.removeContentTypeParser('text/plain');
  readJsonBodies(app);
  refuseEncodedBodies(app);
  refuseHostileText(app, { except: ['/graphql'] });

  // A request's own entity manager, forked when first used: requests refused at the key or the counter never make one.
  const forks = new WeakMap<FastifyRequest, EntityManager>();
  app.decorateRequest('em', {
    getter(this: FastifyRequest): EntityManager {
      let em = forks.get(this);
      if (!em) forks.set(this, (em = deps.orm.em.fork()));
      return em;
    },
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await registerOpenApi(app, { version: '0.1.0', publicBaseUrl: config.publicBaseUrl, undocumentedUrls: ['/graphql'] });
  app.addSchema(ErrorResponse);
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  indexRoutes(api, { temporalUiUrl: config.temporalUiUrl });
  healthRoutes(api, deps.readiness);
  const rateLimit = { defaultPerMinute: config.rateLimitPerMinute, now: deps.now ?? (() => new Date()), counters: poolExecutor(deps.counterOrm) };
  requireDocumentedApiKeys(app, rateLimit);
  const actionKeyAbandonedAfterSeconds = abandonedActionAfterSeconds(config.submitAnswerTimeoutMs);
  refuseUndocumentedQueryParameters(app);
  statusRoutes(api);
  adminRoutes(api, { secretBox: deps.secretBox });
  mitigationRoutes(api);
  leadRoutes(api, { rateLimit, leadWrites: { writes: poolExecutor(deps.orm), em: () => deps.orm.em.fork(), deliveries: deps.deliveryStarter, logger: deps.logger } });
  leadSnippetRoutes(api);
  emailRoutes(api, { dispatcher: deps.emailDispatcher, compiler: createStringTemplateCompiler(), rateLimit });
  paymentRoutes(api, {
    runner: deps.paymentRunner,
    cardVault: deps.cardVault,
    secretBox: deps.secretBox,
    products: deps.productCache,
    settings: {
      processorTimeoutMs: config.processorTimeoutMs,
      threeDSecureTimeoutSeconds: config.threeDSecureTimeoutSeconds,
      webhookSchedule: config.webhookRetrySchedule,
      webhookTimeoutMs: config.webhookTimeoutMs,
      unknownOutcomeGiveUpSeconds: config.unknownOutcomeGiveUpSeconds,
    },
  });
  paymentsApiRoutes(api, {
    actionKeyAbandonedAfterSeconds,
    runner: deps.paymentRunner,
    refundRunner: deps.refundRunner,
    cardVault: deps.cardVault,
    products: deps.productCache,
    publicBaseUrl: config.publicBaseUrl,
    settings: {
      processorTimeoutMs: config.processorTimeoutMs,
      threeDSecureTimeoutSeconds: config.threeDSecureTimeoutSeconds,
      webhookSchedule: config.webhookRetrySchedule,
      webhookTimeoutMs: config.webhookTimeoutMs,
      unknownOutcomeGiveUpSeconds: config.unknownOutcomeGiveUpSeconds,
      authorizationVoidAfterSeconds: config.authorizationVoidAfterSeconds,
    },
  });
  subscriptionRoutes(api, { controller: deps.subscriptionController, deliveries: deps.deliveryStarter, actionKeyAbandonedAfterSeconds });

  const services: GatewayServices = {
    operatorToken: config.operatorToken,
    rateLimit,
    secretBox: deps.secretBox,
    cardVault: deps.cardVault,
    deliveryStarter: deps.deliveryStarter,
    subscriptionController: deps.subscriptionController,
  };
  await mountGraphQL(app, options.schema ?? (await buildGatewaySchema()), services, { allowedOrigins: config.graphqlAllowedOrigins });
  return app;
}
