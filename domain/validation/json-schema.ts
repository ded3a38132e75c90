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
  return addFormats(ajv).addFormat('currency', { type: 'string', validate: isChargeableCurrency }).addFormat('money', { type: 'string', validate: MONEY_TEXT });
}

/** An exact amount written as text: at most 12 whole digits and 2 decimals (`numeric(14, 2)`). */
const MONEY_TEXT = /^\d{1,12}(\.\d{1,2})?$/;
/** What a `money` string must be, said as `toMoneyString` says it of a number. */
const MONEY_PROBLEM = 'must be an amount from 0 to 999999999999.99 with at most 2 decimals';

/** Bodies are validated as sent: no type coercion, no silently dropped fields, first error reported. */
export function createStrictAjv(): Ajv {
  return addGatewayFormats(new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, strict: false }));
}

/** Query strings arrive as text; integers and booleans are coerced, nothing else is. */
export function createQueryAjv(): Ajv {
  return addGatewayFormats(new Ajv({ coerceTypes: true, removeAdditional: false, useDefaults: true, allErrors: false, strict: false }));
}

/** Turns ajv's errors of one value into a sentence that names the offending field and, for a choice, its choices. */
export function describeSchemaErrors(errors: readonly ErrorObject[], root = 'body'): string {
  const choices = literalChoicesOf(errors);
  if (choices) {
    const subject = subjectOf(errors[0]!, root);
    return choices.length <= MAX_CHOICES_LISTED ? `${subject} must be one of: ${choices.join(', ')}` : `${subject} must be one of the allowed values`;
  }
  return describeSchemaError(branchTheValueTook(errors), root);
}

/**
 * A union (`anyOf`) reports first the branch tried first, often a type the value is not (`maxPrice must be number` of
 * `"12.345"`, which a decimal string branch takes): the error of a branch whose type the value has, at the same place,
 * says what is wrong with it.
 */
function branchTheValueTook(errors: readonly ErrorObject[]): ErrorObject {
  const first = errors[0]!;
  if (first.keyword !== 'type' || !first.schemaPath.includes('/anyOf/')) return first;
  return errors.find((error) => error.instancePath === first.instancePath && error.keyword !== 'type' && error.keyword !== 'anyOf' && error.schemaPath.includes('/anyOf/')) ?? first;
}

/** Choices listed in full up to this many; a longer list is only said to be one. */
const MAX_CHOICES_LISTED = 20;

/**
 * A union of literals (`Type.Union([Type.Literal('a'), …])`) fails as one `const` error per branch and then the
 * `anyOf` itself, the first of which says only "must be equal to constant": the values its branches allow.
 */
function literalChoicesOf(errors: readonly ErrorObject[]): string[] | undefined {
  const first = errors[0];
  const union = first?.keyword === 'const' ? /^(.*\/anyOf)\/\d+\/const$/.exec(first.schemaPath)?.[1] : undefined;
  if (!first || !union) return undefined;
  const choices: string[] = [];
  for (const error of errors) {
    if (error.instancePath !== first.instancePath) return undefined;
    if (error.keyword === 'anyOf' && error.schemaPath === union) return choices;
    if (error.keyword !== 'const' || !/^\/\d+\/const$/.test(error.schemaPath.slice(union.length))) return undefined;
    choices.push(String((error.params as { allowedValue: unknown }).allowedValue));
  }
  return undefined;
}

/** The field an error is of, written as a caller writes it (`card.number`, `items[2].qty`); '' for the whole. */
function pathOf(error: ErrorObject): string {
  return error.instancePath
    .split('/')
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('')
    .replace(/^\./, '');
}

function subjectOf(error: ErrorObject, root: string): string {
  return pathOf(error) || root;
}

/** Turns an ajv error into a sentence that names the offending field. */
export function describeSchemaError(error: ErrorObject, root = 'body'): string {
  const path = pathOf(error);
  const subject = subjectOf(error, root);
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
      if ((error.params as { format?: string }).format === 'money') return `${subject} ${MONEY_PROBLEM}`;
      return `${subject} ${error.message ?? 'is invalid'}`;
    case 'enum': {
      const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues ?? [];
      if (allowed.length > 0 && allowed.length <= MAX_CHOICES_LISTED) return `${subject} must be one of: ${allowed.map(String).join(', ')}`;
      return `${subject} ${error.message ?? 'is invalid'}`;
    }
    case 'maxLength':
    case 'minLength':
    case 'maximum':
    case 'minimum':
    case 'maxItems':
    case 'minItems':
    case 'pattern':
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
