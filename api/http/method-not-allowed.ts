import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The body of a 404 or 405 under some paths, where an API has an error shape of its own (the Stripe-style `/payments`). */
export interface UnknownRouteShape {
  readonly prefixes: readonly string[];
  readonly body: (status: 404 | 405, message: string) => unknown;
}

/**
 * A known path asked with a method it does not serve is 405 with `Allow`, not 404: the caller has the
 * address right and the verb wrong. Routes are remembered as they are registered (call this first). The body is
 * the REST shape, or the shape of the API the path belongs to.
 */
export function answerUnknownRoutes(app: FastifyInstance, options: { shapes?: readonly UnknownRouteShape[] } = {}): void {
  const bodyOf = (path: string, status: 404 | 405, message: string) => {
    const shape = options.shapes?.find((candidate) => candidate.prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)));
    return shape ? shape.body(status, message) : { success: false, message };
  };
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat().map((method) => method.toUpperCase());
    const source = route.url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    routes.push({ pattern: new RegExp(`^${source}/?$`), methods });
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const allowed = [...new Set(routes.filter((route) => route.pattern.test(path)).flatMap((route) => route.methods))];
    if (allowed.length > 0) {
      return reply
        .status(405)
        .header('allow', allowed.sort().join(', '))
        .send(bodyOf(path, 405, `${request.method} is not allowed on ${path}; use ${allowed.sort().join(' or ')}`));
    }
    return reply.status(404).send(bodyOf(path, 404, `No route ${request.method} ${path}`));
  });
}
