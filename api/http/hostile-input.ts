import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { findHostileValue, HOSTILE_VALUE_PROBLEM, type HostileKind } from '../../domain/validation/hostile-text.ts';

/**
 * Refuses NUL bytes and unpaired surrogates anywhere in a REST request's body, query string or path, and numbers JSON
 * cannot hold (`1e309`) in its body, with the
 * route's normal 400 naming the field. One hook for every route, so a new field cannot forget it. `/graphql`
 * answers in GraphQL's own error shape (its request guard checks every argument).
 */
export function refuseHostileText(app: FastifyInstance, options: { except: readonly string[] }): void {
  app.addHook('preValidation', async (request) => {
    if (options.except.includes(request.routeOptions.url ?? '')) return;
    for (const [location, value] of [['path', request.params], ['query', request.query], ['body', request.body]] as const) {
      const hostile = findHostileValue(value, '');
      if (hostile !== undefined) throw new HostileTextError(location, hostile.path || 'body', hostile.kind);
    }
  });
}

/** Hostile text refused at the edge, with where it was: a route whose query and body errors differ tells them apart. */
export class HostileTextError extends DomainError {
  constructor(
    readonly location: 'path' | 'query' | 'body',
    field: string,
    kind: HostileKind = 'text',
  ) {
    super('validation', `${field} ${HOSTILE_VALUE_PROBLEM[kind]}`, { field });
  }
}
