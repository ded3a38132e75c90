import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * A known path asked with a method it does not serve is 405 with `Allow`, not 404: the caller has the
 * address right and the verb wrong. Routes are remembered as they are registered (call this first).
 */
export function answerUnknownRoutes(app: FastifyInstance): void {
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
        .send({ success: false, message: `${request.method} is not allowed on ${path}; use ${allowed.sort().join(' or ')}` });
    }
    return reply.status(404).send({ success: false, message: `No route ${request.method} ${path}` });
  });
}
