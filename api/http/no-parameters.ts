import { Type } from '@sinclair/typebox';
import type { preValidationHookHandler } from 'fastify';

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
