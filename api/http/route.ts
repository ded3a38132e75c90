import type { FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { TSchema } from '@sinclair/typebox';

/**
 * One REST route: its schemas validate requests and also generate the OpenAPI document, so the
 * documentation cannot drift from what is enforced.
 */
export interface RouteDefinition {
  readonly method: HTTPMethods;
  readonly url: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  /** Which authentication runs before the handler. */
  readonly auth: 'none' | 'admin';
  readonly schema: {
    readonly params?: TSchema;
    readonly querystring?: TSchema;
    readonly body?: TSchema;
    readonly headers?: TSchema;
    readonly response: Readonly<Record<number, TSchema>>;
  };
  readonly handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

export function defineRoute(route: RouteDefinition): RouteDefinition {
  return route;
}
