import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';

/**
 * The body of a POST that takes no parameters (a capture, a void, a subscription's cancel): any field sent is
 * refused (400 naming it), never silently ignored, so a client asking for a partial capture learns it is not one.
 */
export const NoParametersBody = Type.Object({}, { additionalProperties: false, description: 'No parameters; the body may be left out' });

/**
 * Fastify validates a POST sent without a body as `undefined`, which no object schema takes: it is read as `{}`. Only a
 * missing body: a JSON `null` is a body and no object, refused by the schema as `[]` is (read as `{}`, a refund's
 * would have refunded everything left).
 */
export const bodyMayBeLeftOut: preValidationHookHandler = async (request) => {
  if (request.body === undefined) request.body = {};
};

/**
 * The options of a route that takes no parameters (a capture, a void, a subscription's action): no body is read as
 * `{}`, and so is an empty one sent with `Content-Type: application/json` (what a client library with a default JSON
 * header sends for a bodiless POST), which JSON itself would refuse (`readJsonBodies` asks `bodyMayBeLeftOutOn`). Not
 * for a route whose body carries optional parameters (a refund's amount): a client that sent an empty JSON body meant
 * one, and reading it as none would act on defaults it did not ask for.
 */
export const optionalBody = { preValidation: bodyMayBeLeftOut, config: { bodyMayBeLeftOut: true } } as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `optionalBody`. */
    bodyMayBeLeftOut?: boolean;
  }
}

/** Whether the request's route takes no body as `{}` (`optionalBody`). */
export const bodyMayBeLeftOutOn = (request: FastifyRequest): boolean => request.routeOptions.config?.bodyMayBeLeftOut === true;

/** The query string of a route that documents none: every parameter is unknown. */
const NoQueryParameters = Type.Object({}, { additionalProperties: false });

/**
 * A route that needs a key and documents no query parameters refuses any it is sent (400 naming it, in its API's
 * shape), as the routes that document some refuse the others: `PUT …/merchantaccounts/7?rowVersion=3` must not
 * pass for a conditional update that was never made. Call before the routes are added.
 */
export function refuseUndocumentedQueryParameters(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const security = route.schema?.security;
    if (!Array.isArray(security) || security.length === 0 || route.schema?.querystring) return;
    route.schema = { ...route.schema, querystring: NoQueryParameters };
  });
}
