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
    const properties = (request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties;
    const undecodable = properties && undecodableQueryParameter(request.url, (name) => Object.hasOwn(properties, name));
    if (undecodable !== undefined) throw new HostileTextError('query', undecodable, 'encoding');
    for (const [location, value] of [['path', request.params], ['query', request.query], ['body', request.body]] as const) {
      const hostile = findHostileValue(value, '');
      if (hostile !== undefined) throw new HostileTextError(location, hostile.path || 'body', hostile.kind);
    }
    const repeated = repeatedQueryParameter(request.query, request.routeOptions.schema?.querystring);
    if (repeated !== undefined) throw new HostileTextError('query', repeated, 'repeated');
  });
}

/**
 * The first parameter the route reads (`reads` names it) whose percent-escapes decode to no UTF-8 (`%FF`, an
 * encoded lone surrogate `%ED%A0%80`) or escape nothing (`%zz`): query parsers read those as U+FFFD or as written,
 * quietly another value than the one sent, where the same bytes in a body are refused. Parameters no route reads are
 * left alone (a tracker's `?ref=50%off` on the cardholder's challenge redirect must still redirect).
 */
export function undecodableQueryParameter(url: string, reads: (name: string) => boolean): string | undefined {
  const start = url.indexOf('?');
  if (start < 0) return undefined;
  for (const pair of url.slice(start + 1).split('&')) {
    const equals = pair.indexOf('=');
    const name = decoded(equals < 0 ? pair : pair.slice(0, equals));
    if (name === undefined || !reads(name)) continue;
    if (equals >= 0 && decoded(pair.slice(equals + 1)) === undefined) return name;
  }
  return undefined;
}

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * A parameter the route takes once, given more than once (`?limit=10&limit=20`, read as a list): named as such, rather
 * than refused as "must be integer", which sends its caller looking at a value that is fine, and never read as either
 * value (which one a proxy or a cache reads differs: HTTP parameter pollution).
 */
function repeatedQueryParameter(query: unknown, schema: unknown): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.keys(query).find((name) => Array.isArray((query as Record<string, unknown>)[name]) && Object.hasOwn(properties, name) && properties[name]!.type !== 'array');
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
