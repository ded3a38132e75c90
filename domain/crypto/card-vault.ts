import { createHmac, hkdfSync } from 'node:crypto';
import type { ValidatedCard } from '../payments/pre-validation.ts';
import { createSecretBox, type SecretBox } from './secret-box.ts';

/** Sealed card data as it travels through Temporal: ciphertext only. */
export type SealedCard = string & { readonly __sealed: unique symbol };

/**
 * Keeps card numbers out of Temporal history, the database and logs: the gateway seals the card
 * (AES-256-GCM) before it enters a workflow, only the authorization activity opens it, and what is
 * stored is a keyed fingerprint (HMAC-SHA256 of the PAN) for blocklists and velocity.
 * Both keys derive from DATA_ENCRYPTION_KEY with HKDF, so neither is the key of the other use.
 */
export interface CardVault {
  seal(card: ValidatedCard): SealedCard;
  open(sealed: SealedCard): ValidatedCard;
  fingerprint(pan: string): string;
}

export function createCardVault(dataEncryptionKey: Buffer): CardVault {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', dataEncryptionKey, Buffer.alloc(0), info, 32));
  const box: SecretBox = createSecretBox(derive('card-vault'));
  const fingerprintKey = derive('card-fingerprint');
  return {
    seal: (card) => box.seal(JSON.stringify(card)) as SealedCard,
    open: (sealed) => JSON.parse(box.open(sealed)) as ValidatedCard,
    fingerprint: (pan) => createHmac('sha256', fingerprintKey).update(pan).digest('hex'),
  };
}
