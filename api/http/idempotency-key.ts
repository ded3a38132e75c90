import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { DomainError } from '../../domain/errors.ts';
import { timesGiven } from './raw-headers.ts';

/**
 * An Idempotency-Key is 1 to 255 printable ASCII characters. HTTP carries other bytes (read as latin1), and an
 * `é` sent as UTF-8 would name a different key from one sent as latin1: such keys are refused rather than kept.
 */
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** The header's schema, for a route's OpenAPI document (the handler checks it with `idempotencyKeyOf`). */
export const idempotencyKeyHeader = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY.source, description }));

/** The headers of an action on an existing resource (capture, void; a subscription's cancel, pause, resume). */
export const ActionIdempotencyHeaders = Type.Object({
  'Idempotency-Key': idempotencyKeyHeader(
    "Makes the action safe to retry: the key's first request acts and its answer is kept 7 days; a repeat answers that answer, whatever changed since; the key with another action or resource is 409 `idempotency_key_reused`, while its first request runs 409 `idempotency_key_in_use`",
  ),
});

/** The request's Idempotency-Key, or undefined; a malformed one, or one given twice, is 400 naming the header. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  // Node joins two keys into one (`a1, a2`), a key neither copy of the request named.
  if (timesGiven(request, 'idempotency-key') > 1) {
    throw new DomainError('validation', 'Idempotency-Key is given more than once; send one', { field: 'Idempotency-Key' });
  }
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    throw new DomainError('validation', 'Idempotency-Key must be 1 to 255 printable ASCII characters', { field: 'Idempotency-Key' });
  }
  return key;
}
