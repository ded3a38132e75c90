import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';

/**
 * What identifies a request for idempotency (spec 8): the caller's `idempotencyKey`, or one derived from the
 * request's content when absent, so the same e-mail sent twice within the key's lifetime goes out once.
 * Given and derived keys live in separate namespaces (`key:` / `content:`): no caller key can collide with a
 * derived one. The request hash covers everything but the key itself, in a canonical JSON form, so a repeat
 * with reordered fields (or the tenant key in another case) is the same request and any changed value is another one (409).
 */
export function requestIdentity(kind: 'single' | 'batch', body: Record<string, unknown>): { key: string; requestHash: string } {
  const { idempotencyKey, ...content } = body as { idempotencyKey?: string; tenant_key?: unknown };
  // The same tenant however its key is cased (a UUID's hex digits): the same request.
  if (typeof content.tenant_key === 'string') content.tenant_key = content.tenant_key.toLowerCase();
  const requestHash = createHash('sha256').update(`${kind}\n${stringify(content)}`).digest('hex');
  return { key: idempotencyKey === undefined ? `content:${requestHash}` : `key:${idempotencyKey}`, requestHash };
}
