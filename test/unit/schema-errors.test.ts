import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { createQueryAjv, createStrictAjv, describeSchemaErrors } from '../../domain/validation/json-schema.ts';

/** The sentence a caller reads for a value the schema refuses. */
function refusalOf(schema: Parameters<ReturnType<typeof createStrictAjv>['compile']>[0], value: unknown, ajv = createStrictAjv()): string {
  const validate = ajv.compile(schema);
  expect(validate(value)).toBe(false);
  return describeSchemaErrors(validate.errors!, 'query');
}

describe('schema refusals', () => {
  it('lists the values a union of literals allows, not "must be equal to constant"', () => {
    const schema = Type.Object({ status: Type.Optional(Type.Union(['succeeded', 'failed'].map((s) => Type.Literal(s)))) });
    expect(refusalOf(schema, { status: 'bogus' }, createQueryAjv())).toBe('status must be one of: succeeded, failed');
  });

  it('says a long union of literals is a choice without listing it', () => {
    const values = Array.from({ length: 21 }, (_, i) => `v${i}`);
    expect(refusalOf(Type.Object({ kind: Type.Union(values.map((v) => Type.Literal(v))) }), { kind: 'x' })).toBe('kind must be one of the allowed values');
  });

  it('lists the values of an enum', () => {
    expect(refusalOf(Type.Object({ kind: Type.Unsafe({ enum: ['a', 'b'] }) }), { kind: 'c' })).toBe('kind must be one of: a, b');
  });

  it('names a nested field and leaves other refusals as they were', () => {
    const schema = Type.Object({ card: Type.Object({ number: Type.String() }) });
    expect(refusalOf(schema, { card: { number: 4 } })).toBe('card.number must be string');
    expect(refusalOf(schema, {})).toBe('card is required');
  });
});
