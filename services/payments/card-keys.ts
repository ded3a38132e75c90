import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { lockTenantCardKeys } from '../../data/queries/card-keys.ts';
import { CardEncryptionKey } from '../../schema/entities/index.ts';
import { decryptCard, generateCardKeyPair, type EncryptedCardPayload } from '../../domain/payments/card-encryption.ts';

/** The tenant's active public key for checkout pages, or null before the first rotation. */
export async function activeCardKey(em: EntityManager, tenantId: number): Promise<CardEncryptionKey | null> {
  return em.findOne(CardEncryptionKey, { tenant: tenantId, active: true }, { orderBy: { createdAt: 'desc' } });
}

/** Issues a new key pair and makes it the active one (one at a time per tenant); earlier keys keep decrypting. */
/** A new active card-encryption key pair for the tenant, audited with who asked for it (the key's id, never the key). */
export async function rotateCardKey(em: EntityManager, secretBox: SecretBox, tenantId: number, actor: string): Promise<CardEncryptionKey> {
  const kid = `ck_${randomUUID().replaceAll('-', '')}`;
  const pair = await generateCardKeyPair(kid);
  return em.transactional(async (tx) => {
    await lockTenantCardKeys(tx, tenantId);
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
