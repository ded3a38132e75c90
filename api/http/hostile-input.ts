import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { findHostileText } from '../../domain/validation/hostile-text.ts';

/**
 * Refuses NUL bytes and unpaired surrogates anywhere in a REST request's body, query string or path, with the
 * route's normal 400 naming the field. One hook for every route, so a new field cannot forget it. `/graphql`
 * answers in GraphQL's own error shape (its request guard checks every argument).
 */
export function refuseHostileText(app: FastifyInstance, options: { except: readonly string[] }): void {
  app.addHook('preValidation', async (request) => {
    if (options.except.includes(request.routeOptions.url ?? '')) return;
    const field = findHostileText(request.params, '') ?? findHostileText(request.query, '') ?? findHostileText(request.body, '');
    if (field !== undefined) {
      throw new DomainError('validation', `${field || 'body'} must not contain NUL bytes or unpaired surrogates`, { field: field || 'body' });
    }
  });
}
