import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { claimCardKeyRotation, lockTenantCardKeys, releaseCardKeyRotation } from '../../data/queries/card-keys.ts';
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
 * with who asked for it (the key's id, never the key). The rotation is claimed first, in one statement
 * (`claimCardKeyRotation`): one within `CARD_KEY_ROTATION_SPACING_SECONDS` of the last is refused (`rate_limited`, with
 * the seconds to wait) before any key is generated, and the key pair is generated with no connection held. A rotation
 * that fails after its claim gives it back.
 */
export async function rotateCardKey(em: EntityManager, secretBox: SecretBox, tenantId: number, actor: string): Promise<CardEncryptionKey> {
  const claim = await claimCardKeyRotation(em, tenantId, CARD_KEY_ROTATION_SPACING_SECONDS);
  if ('tenantMissing' in claim) throw new DomainError('not_found', `Tenant ${tenantId} not found`, { field: 'tenantId' });
  if (!claim.granted) {
    throw new DomainError('rate_limited', `The card-encryption key was rotated less than ${CARD_KEY_ROTATION_SPACING_SECONDS} seconds ago; rotate again in ${claim.waitSeconds} s`, {
      retryAfterSeconds: claim.waitSeconds,
    });
  }
  try {
    const kid = `ck_${randomUUID().replaceAll('-', '')}`;
    const pair = await generateCardKeyPair(kid);
    return await em.transactional(async (tx) => {
      await lockTenantCardKeys(tx, tenantId);
      await tx.nativeUpdate(CardEncryptionKey, { tenant: tenantId, active: true }, { active: false });
      const key = tx.create(CardEncryptionKey, { id: kid, tenant: tenantId, publicJwk: pair.publicJwk as Record<string, unknown>, privateKeyCiphertext: secretBox.seal(pair.privatePkcs8) });
      await tx.flush();
      await recordAuditEntry(tx, { tenantId, actor, action: 'card_key.rotated', entityType: 'CardEncryptionKey', entityId: kid, changes: { kid } });
      return key;
    });
  } catch (error) {
    await releaseCardKeyRotation(em, tenantId, claim.claimedAt).catch(() => undefined);
    throw error;
  }
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
