import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { secondsUntilCardKeyMayRotate, tryLockTenantCardKeys } from '../../data/queries/card-keys.ts';
import { DomainError } from '../../domain/errors.ts';
import { CardEncryptionKey } from '../../schema/entities/index.ts';
import { decryptCard, generateCardKeyPair, type EncryptedCardPayload } from '../../domain/payments/card-encryption.ts';

/** The tenant's active public key for checkout pages, or null before the first rotation. */
export async function activeCardKey(em: EntityManager, tenantId: number): Promise<CardEncryptionKey | null> {
  return em.findOne(CardEncryptionKey, { tenant: tenantId, active: true }, { orderBy: { createdAt: 'desc' } });
}

/**
 * How often a tenant's key may be rotated. Each rotation generates an RSA key pair, a fraction of a second of CPU, so
 * one tenant rotating in a loop (its rate limit allows 100 requests a minute) would slow every other tenant's requests;
 * a page keeps a key for far longer than this.
 */
export const CARD_KEY_ROTATION_SPACING_SECONDS = 60;

/**
 * Issues a new key pair and makes it the active one (one at a time per tenant); earlier keys keep decrypting. Audited
 * with who asked for it (the key's id, never the key). Under the tenant's card-key lock, taken before any key is
 * generated: a rotation while another of the tenant runs is refused (409), as is one within
 * `CARD_KEY_ROTATION_SPACING_SECONDS` of the tenant's newest key (429 with the seconds to wait).
 */
export async function rotateCardKey(em: EntityManager, secretBox: SecretBox, tenantId: number, actor: string): Promise<CardEncryptionKey> {
  return em.transactional(async (tx) => {
    if (!(await tryLockTenantCardKeys(tx, tenantId))) {
      throw new DomainError('conflict', 'Another card-encryption key of this tenant is being issued now; read it with cardEncryptionKey');
    }
    const wait = await secondsUntilCardKeyMayRotate(tx, tenantId, CARD_KEY_ROTATION_SPACING_SECONDS);
    if (wait > 0) {
      throw new DomainError('rate_limited', `The card-encryption key was rotated less than ${CARD_KEY_ROTATION_SPACING_SECONDS} seconds ago; rotate again in ${wait} s`, { retryAfterSeconds: wait });
    }
    const kid = `ck_${randomUUID().replaceAll('-', '')}`;
    const pair = await generateCardKeyPair(kid);
    await tx.nativeUpdate(CardEncryptionKey, { tenant: tenantId, active: true }, { active: false });
    const key = tx.create(CardEncryptionKey, { id: kid, tenant: tenantId, publicJwk: pair.publicJwk as Record<string, unknown>, privateKeyCiphertext: secretBox.seal(pair.privatePkcs8) });
    await tx.flush();
    await recordAuditEntry(tx, { tenantId, actor, action: 'card_key.rotated', entityType: 'CardEncryptionKey', entityId: kid, changes: { kid } });
    return key;
  });
}

/** What `rotateCardKey` names a key: anything else in a JWE's header names no key (and never reaches a query). */
const CARD_KEY_ID = /^ck_[0-9a-f]{32}$/;

/** Decrypts a card JWE with the tenant's key named by its `kid`; undefined for anything that does not open. */
export async function openEncryptedCard(em: EntityManager, secretBox: SecretBox, tenantId: number, jwe: string): Promise<EncryptedCardPayload | undefined> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(jwe).kid;
  } catch {
    return undefined;
  }
  // The header is the sender's JSON: a number or an object there (`{"$ne": null}`) would be a query operator to the ORM.
  if (typeof kid !== 'string' || !CARD_KEY_ID.test(kid)) return undefined;
  const key = await em.findOne(CardEncryptionKey, { id: kid, tenant: tenantId });
  return key ? decryptCard(jwe, secretBox.open(key.privateKeyCiphertext)) : undefined;
}
