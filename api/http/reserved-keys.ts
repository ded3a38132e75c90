/**
 * A JSON body with a key `__proto__` (or `constructor` holding `prototype`), which Fastify's parser refuses rather than
 * let it reach an object's prototype. The body is valid JSON, so every API names the field instead of calling the
 * body malformed.
 */
export class ReservedKeyError extends Error {
  readonly statusCode = 400;
  constructor() {
    super('The body holds a field named __proto__ (or constructor.prototype)');
    this.name = 'ReservedKeyError';
  }
}

export function isReservedKeyRefusal(error: unknown): error is ReservedKeyError {
  return error instanceof ReservedKeyError;
}

/** What every API says of such a field. */
export const RESERVED_KEY_FIELD = '__proto__';
export const RESERVED_KEY_PROBLEM = 'a field named __proto__ (or constructor.prototype) is not taken, at any depth';
