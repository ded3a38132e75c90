import { DUPLICATE_KEY_PROBLEM } from '../../domain/validation/duplicate-keys.ts';

/**
 * A JSON body that gives one field twice in an object: `{"amount": 100, "amount": 100000}`. `JSON.parse` keeps the
 * last; a proxy, a firewall rule or a log reader in front of the gateway may keep the first, so the request would mean
 * one thing where it was checked and another where it was charged. Such a body is refused, naming the field (never
 * its values).
 */
export class DuplicateKeyError extends Error {
  readonly statusCode = 400;
  /** What every API says of the field, after its name. */
  readonly problem = DUPLICATE_KEY_PROBLEM;
  constructor(readonly path: string) {
    super(`${path} ${DUPLICATE_KEY_PROBLEM}`);
    this.name = 'DuplicateKeyError';
  }
}
