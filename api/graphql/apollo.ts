import { ApolloServer, HeaderMap } from '@apollo/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { DomainError } from '../../domain/errors.ts';
import type { GatewayServices } from '../gateway-deps.ts';
import { HTTP_STATUS } from '../http/errors.ts';
import { outageAsUnavailable } from '../http/outages.ts';
import { resolveCaller, type GraphQLContext } from './context.ts';
import { formatGraphQLError, GRAPHQL_CODES } from './errors.ts';
import { createLoaders } from './loaders.ts';
import { OPERATION_LIMITS } from './operation-limits.ts';
import { operationShapeRule } from './operation-shape.rule.ts';
import { requestGuardPlugin } from './request-guard.plugin.ts';
import { sendGraphQLTransportError } from './transport-errors.ts';
import { unexpectedErrorsPlugin } from './unexpected-errors.plugin.ts';
import { anonymousSuggestionsPlugin } from './anonymous-suggestions.plugin.ts';
import { AnswerBudget, answerBudgetPlugin } from './answer-budget.ts';
import { registerGraphQLCors } from './cors.ts';
import { HostileTextError, undecodableQueryParameter } from '../http/hostile-input.ts';

/** What a GraphQL GET request carries in its query string (GraphQL over HTTP); Apollo reads each once, by name. */
const GET_PARAMETERS: ReadonlySet<string> = new Set(['query', 'variables', 'operationName', 'extensions']);

/**
 * Serves Apollo Server at /graphql through Fastify's router (GET and POST), so GraphQL shares the
 * gateway's logging, body limits and request ids.
 */
export async function mountGraphQL(
  app: FastifyInstance,
  schema: GraphQLSchema,
  services: GatewayServices,
  options: { allowedOrigins?: readonly string[] } = {},
): Promise<ApolloServer<GraphQLContext>> {
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError: formatGraphQLError,
    includeStacktraceInErrorResponses: false,
    // Introspection is allowed here and restricted to authenticated callers by the request guard.
    introspection: true,
    // No automatic persisted queries: no client here sends them, and their refusals carry no code of their own.
    persistedQueries: false,
    // Limits on what one request may ask for (operation-limits.ts), all enforced before a resolver runs.
    parseOptions: { maxTokens: OPERATION_LIMITS.maxTokens },
    validationRules: [operationShapeRule],
    plugins: [requestGuardPlugin(schema), unexpectedErrorsPlugin(), anonymousSuggestionsPlugin(), answerBudgetPlugin()],
    // Admin UIs send JSON with a non-simple content type; GET needs a preflight-forcing header.
    csrfPrevention: true,
    // The gateway process owns SIGINT/SIGTERM (api/main.ts) and stops Apollo through Fastify's onClose. Apollo's own
    // handlers (installed outside NODE_ENV=test) raced that stop and left app.close() waiting for ever.
    stopOnTerminationSignals: false,
  });
  await apollo.start();

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: request.method.toUpperCase(), headers, search: request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '', body: request.body },
      context: async () => {
        try {
          const caller = await resolveCaller(services, request.headers.authorization);
          return { em: request.em, services, caller, loaders: createLoaders(request.em), log: request.log, answerBudget: new AnswerBudget() };
        } catch (error) {
          // Before the request runs, so no plugin sees it: the key look-up's failure is logged here. PostgreSQL away is
          // the 503 it is on REST (logged as a warning), never Apollo's "Context creation failed" 500.
          const failure = outageAsUnavailable(error, request.log);
          if (!(failure instanceof DomainError)) request.log.error({ err: error }, 'unexpected error');
          throw contextError(failure);
        }
      },
    });
    for (const [name, value] of response.headers) reply.header(name, value);
    reply.status(response.status ?? 200);
    if (response.body.kind === 'complete') return reply.send(response.body.string);
    const chunks: string[] = [];
    for await (const chunk of response.body.asyncIterator) chunks.push(chunk);
    return reply.send(chunks.join(''));
  };

  // Its own scope: what Fastify refuses before Apollo runs (JSON, size, media type) answers in GraphQL's shape.
  app.register(async (scope) => {
    scope.setErrorHandler((error, request, reply) => sendGraphQLTransportError(request, reply, error));
    registerGraphQLCors(scope, options.allowedOrigins ?? []);
    scope.addHook('preValidation', async (request) => {
      if (request.method !== 'GET') return;
      // Apollo decodes an escape that is no UTF-8 (`%FF`) to U+FFFD: another query than the one sent, where the same
      // bytes in a POST body are refused. A parameter given twice is read as its first by Apollo and as its last by
      // some proxies (HTTP parameter pollution): both refused as REST refuses them, in GraphQL's shape.
      const undecodable = undecodableQueryParameter(request.url, (name) => GET_PARAMETERS.has(name));
      if (undecodable !== undefined) throw new HostileTextError('query', undecodable, 'encoding');
      const repeated = Object.entries(request.query as Record<string, unknown>).find(([name, value]) => GET_PARAMETERS.has(name) && Array.isArray(value));
      if (repeated) throw new HostileTextError('query', repeated[0], 'repeated');
    });
    scope.route({ method: ['GET', 'POST'], url: '/graphql', handler });
  });
  app.addHook('onClose', () => apollo.stop());
  return apollo;
}

/** Authentication failures stop the request with their HTTP status, as on REST. */
function contextError(error: unknown): unknown {
  if (!(error instanceof DomainError)) return error;
  const retryAfter = error.details.retryAfterSeconds;
  return new GraphQLError(error.message, {
    extensions: {
      code: GRAPHQL_CODES[error.code],
      http: { status: HTTP_STATUS[error.code], headers: new HeaderMap(retryAfter !== undefined ? [['retry-after', String(retryAfter)]] : []) },
    },
  });
}
