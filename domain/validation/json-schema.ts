import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema, Static } from '@sinclair/typebox';

// ajv-formats ships CommonJS with a default export under ESM interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Bodies are validated as sent: no type coercion, no silently dropped fields, first error reported. */
export function createStrictAjv(): Ajv {
  return addFormats(new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, strict: false }));
}

/** Query strings arrive as text; integers and booleans are coerced, nothing else is. */
export function createQueryAjv(): Ajv {
  return addFormats(new Ajv({ coerceTypes: true, removeAdditional: false, useDefaults: true, allErrors: false, strict: false }));
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
  switch (error.keyword) {
    case 'additionalProperties':
      return `${path === '' ? '' : `${path}.`}${(error.params as { additionalProperty: string }).additionalProperty} is not a known field`;
    case 'required':
      return `${path === '' ? '' : `${path}.`}${(error.params as { missingProperty: string }).missingProperty} is required`;
    case 'type':
      return `${subject} must be ${(error.params as { type: string }).type}`;
    case 'maxLength':
    case 'minLength':
    case 'maximum':
    case 'minimum':
    case 'maxItems':
    case 'minItems':
    case 'pattern':
    case 'format':
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
