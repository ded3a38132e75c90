import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { createQueryAjv, createStrictAjv } from '../../domain/validation/json-schema.ts';

/**
 * What the route schemas enforce, and what they only document:
 * - bodies and path parameters are validated as sent (no coercion, unknown fields named in the 400);
 * - query strings coerce integers and booleans only, an integer only from decimal digits (`1e1`, `0x10`, ` 5` and
 *   `5.0` would otherwise read as numbers: ajv coerces with `Number`);
 * - headers are documented, not validated: authentication decides them, so a missing key is a 401, not a 400;
 * - responses are documented, not serialized by schema: a payment already charged must never turn into a 500
 *   because its answer lacks a field. Tests check real answers against the document instead.
 */
export function useSchemaCompilers(app: FastifyInstance): void {
  const strictAjv = createStrictAjv();
  const queryAjv = createQueryAjv();
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'headers') return () => true;
    return httpPart === 'querystring' ? digitsOnlyIntegers(schema, queryAjv.compile(schema)) : strictAjv.compile(schema);
  });
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}

/** A whole number in a query string, as a person writes one. */
const DECIMAL_INTEGER = /^-?\d+$/;

/** The query's validation, refusing first an integer parameter not written in decimal digits, as ajv words a wrong type. */
function digitsOnlyIntegers(schema: unknown, validate: ValidateFunction): ValidateFunction | ((query: unknown) => boolean) {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((name) => properties[name]!.type === 'integer');
  if (integers.length === 0) return validate;
  const check = (query: unknown): boolean => {
    const values = (query ?? {}) as Record<string, unknown>;
    const written = integers.find((name) => typeof values[name] === 'string' && !DECIMAL_INTEGER.test(values[name]));
    if (written === undefined) {
      const valid = validate(query) as boolean;
      check.errors = validate.errors;
      return valid;
    }
    check.errors = [{ instancePath: `/${written}`, schemaPath: `#/properties/${written}/type`, keyword: 'type', params: { type: 'integer' }, message: 'must be integer' }];
    return false;
  };
  check.errors = null as ErrorObject[] | null | undefined;
  return check;
}
