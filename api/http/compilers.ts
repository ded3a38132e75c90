import type { FastifyInstance } from 'fastify';
import { createQueryAjv, createStrictAjv } from '../../domain/validation/json-schema.ts';

/**
 * What the route schemas enforce, and what they only document:
 * - bodies and path parameters are validated as sent (no coercion, unknown fields named in the 400);
 * - query strings coerce integers and booleans only;
 * - headers are documented, not validated: authentication decides them, so a missing key is a 401, not a 400;
 * - responses are documented, not serialized by schema: a payment already charged must never turn into a 500
 *   because its answer lacks a field. Tests check real answers against the document instead.
 */
export function useSchemaCompilers(app: FastifyInstance): void {
  const strictAjv = createStrictAjv();
  const queryAjv = createQueryAjv();
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'headers') return () => true;
    return httpPart === 'querystring' ? queryAjv.compile(schema) : strictAjv.compile(schema);
  });
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}
