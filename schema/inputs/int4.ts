import { Type, type IntegerOptions, type TSchema } from '@sinclair/typebox';

/** The range of PostgreSQL's `int`, the type of every integer column an input is stored in. */
export const INT4 = { minimum: -2_147_483_648, maximum: 2_147_483_647 } as const;

/** An integer input kept within `int` (narrower bounds of its own stay): an overflow is a 400, never a 500 from the database. */
export function int4(options: IntegerOptions = {}) {
  return Type.Integer({ ...options, minimum: Math.max(options.minimum ?? INT4.minimum, INT4.minimum), maximum: Math.min(options.maximum ?? INT4.maximum, INT4.maximum) });
}

/** The schema with every integer in it (through unions) given `int`'s bounds where it has none narrower. */
export function withIntegerBounds<T extends TSchema>(schema: T): T {
  const given = schema as T & { type?: string; anyOf?: TSchema[]; minimum?: number; maximum?: number };
  if (given.type === 'integer') return { ...given, minimum: Math.max(given.minimum ?? INT4.minimum, INT4.minimum), maximum: Math.min(given.maximum ?? INT4.maximum, INT4.maximum) };
  if (given.anyOf) return { ...given, anyOf: given.anyOf.map(withIntegerBounds) };
  return schema;
}
