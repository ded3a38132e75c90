import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema, Static } from '@sinclair/typebox';
import { CURRENCY_PROBLEM, isChargeableCurrency } from '../currencies.ts';

// ajv-formats ships CommonJS with a default export under ESM interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * A record's key pattern that every key matches, line breaks included: TypeBox writes a record's keys as the pattern
 * `^(.*)$`, which misses a key holding a line break, and such a key's value then goes unchecked.
 */
export const ANY_RECORD_KEY = '^[\\s\\S]*$';

/** The formats of this gateway's own besides the standard ones: `currency`, a code of `CHARGEABLE_CURRENCIES`. */
function addGatewayFormats(ajv: Ajv): Ajv {
  return addFormats(ajv).addFormat('currency', { type: 'string', validate: isChargeableCurrency });
}

/** Bodies are validated as sent: no type coercion, no silently dropped fields, first error reported. */
export function createStrictAjv(): Ajv {
  return addGatewayFormats(new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, strict: false }));
}

/** Query strings arrive as text; integers and booleans are coerced, nothing else is. */
export function createQueryAjv(): Ajv {
  return addGatewayFormats(new Ajv({ coerceTypes: true, removeAdditional: false, useDefaults: true, allErrors: false, strict: false }));
}

/** Turns an ajv error into a sentence that names the offending field. */
export function describeSchemaError(error: ErrorObject, root = 'body'): string {
  const path = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('')
    .replace(/^\./, '');
  const subject = path === '' ? root : path;
  // A field name refused by `propertyNames`: said of the name, which is not echoed (it may be long, or anything).
  if ((error as { propertyName?: string }).propertyName !== undefined) return `${subject}: a field name ${error.message ?? 'is invalid'}`;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${path === '' ? '' : `${path}.`}${(error.params as { additionalProperty: string }).additionalProperty} is not a known field`;
    case 'required':
      return `${path === '' ? '' : `${path}.`}${(error.params as { missingProperty: string }).missingProperty} is required`;
    case 'type':
      return `${subject} must be ${(error.params as { type: string }).type}`;
    case 'format':
      if ((error.params as { format?: string }).format === 'currency') return `${subject} ${CURRENCY_PROBLEM}`;
      return `${subject} ${error.message ?? 'is invalid'}`;
    case 'maxLength':
    case 'minLength':
    case 'maximum':
    case 'minimum':
    case 'maxItems':
    case 'minItems':
    case 'pattern':
    case 'enum':
    case 'const':
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

export interface Validator<T extends TSchema> {
  (value: unknown): value is Static<T>;
  readonly errors: ValidateFunction['errors'];
}

export function compile<T extends TSchema>(ajv: Ajv, schema: T): ValidateFunction<Static<T>> {
  return ajv.compile<Static<T>>(schema);
}
