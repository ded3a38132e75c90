import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The body of a 400, 404 or 405 under some paths, where an API has an error shape of its own (the Stripe-style `/payments`). */
export interface UnknownRouteShape {
  readonly prefixes: readonly string[];
  readonly body: (status: 400 | 404 | 405 | 500, message: string) => unknown;
}

/** The longest path segment the router matches (Fastify's default is 100): longer ids reach their route's checks. */
export const MAX_PATH_PARAMETER_LENGTH = 500;

function unknownRouteBody(shapes: readonly UnknownRouteShape[] | undefined, path: string, status: 400 | 404 | 405 | 500, message: string): unknown {
  const shape = shapes?.find((candidate) => candidate.prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)));
  return shape ? shape.body(status, message) : { success: false, message };
}

/**
 * What Fastify's router refuses before any route, hook or error handler runs, in the shape of the API the path
 * belongs to (Fastify's own body, `{error, code, message, statusCode}`, is no shape of this API): a path that is not
 * valid percent-encoding is 400; a path segment longer than `MAX_PATH_PARAMETER_LENGTH` names no product, payment or
 * account, so it is 404 as an unknown one would be (Fastify says 414). Give it as the `frameworkErrors` option.
 */
export function answerFrameworkErrors(options: { shapes?: readonly UnknownRouteShape[] } = {}) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const path = request.url.split('?')[0]!;
    reply.header('x-request-id', request.id);
    const shown = path.length > 120 ? `${path.slice(0, 120)}…` : path;
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      reply.status(404).send(unknownRouteBody(options.shapes, path, 404, `Nothing at ${shown}: a path segment is longer than ${MAX_PATH_PARAMETER_LENGTH} characters`));
      return;
    }
    if (error.code === 'FST_ERR_BAD_URL') {
      reply.status(400).send(unknownRouteBody(options.shapes, path, 400, 'The path is not valid percent-encoding'));
      return;
    }
    request.log.error({ err: error }, 'unexpected router error');
    reply.status(500).send(unknownRouteBody(options.shapes, path, 500, 'Internal server error'));
  };
}

/**
 * A known path asked with a method it does not serve is 405 with `Allow`, not 404: the caller has the
 * address right and the verb wrong. Routes are remembered as they are registered (call this first). The body is
 * the REST shape, or the shape of the API the path belongs to. Returns the answer, for the error handler of a request
 * that reached no route.
 */
export function answerUnknownRoutes(app: FastifyInstance, options: { shapes?: readonly UnknownRouteShape[] } = {}): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  const bodyOf = (path: string, status: 404 | 405, message: string) => unknownRouteBody(options.shapes, path, status, message);
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat().map((method) => method.toUpperCase());
    const source = route.url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    routes.push({ pattern: new RegExp(`^${source}/?$`), methods });
  });

  const answer = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split('?')[0]!;
    const allowed = [...new Set(routes.filter((route) => route.pattern.test(path)).flatMap((route) => route.methods))];
    if (allowed.length > 0) {
      return reply
        .status(405)
        .header('allow', allowed.sort().join(', '))
        .send(bodyOf(path, 405, `${request.method} is not allowed on ${path}; use ${allowed.sort().join(' or ')}`));
    }
    return reply.status(404).send(bodyOf(path, 404, `No route ${request.method} ${path}`));
  };
  app.setNotFoundHandler(answer);
  // The answer is also for the error handler: a body that fails to parse on a path with no such route (a DELETE with
  // bad JSON) is still that route's 404 or 405, not the body's 400.
  return answer;
}
