import { createHmac, hkdfSync } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import type { ValidatedCard } from '../payments/pre-validation.ts';

/** Sealed card data as it travels through Temporal: a compact JWE, ciphertext only. */
export type SealedCard = string & { readonly __sealed: unique symbol };

/**
 * Keeps card numbers out of Temporal history, the database and logs: the gateway seals the card
 * before it enters a workflow, only the authorization activity opens it, and what is stored is a
 * keyed fingerprint (HMAC-SHA256 of the PAN) for blocklists and velocity.
 * Every key derives from DATA_ENCRYPTION_KEY with HKDF, so none is the key of another use.
 */
export interface CardVault {
  seal(card: ValidatedCard): Promise<SealedCard>;
  open(sealed: SealedCard): Promise<ValidatedCard>;
  fingerprint(pan: string): string;
  /**
   * Keyed digest (HMAC-SHA256) of a request an Idempotency-Key is bound to. Keyed, so a database reader cannot
   * test guesses against it; callers put the card's fingerprint in the request, never the PAN or CVV.
   */
  requestDigest(canonicalRequest: string): string;
}

// A standard envelope (RFC 7516): the key is used directly for AES-256-GCM, nothing is wrapped.
const SEALING = { alg: 'dir', enc: 'A256GCM' } as const;

export function createCardVault(dataEncryptionKey: Buffer): CardVault {
  const derive = (info: string) => new Uint8Array(hkdfSync('sha256', dataEncryptionKey, Buffer.alloc(0), info, 32));
  const sealingKey = derive('card-vault');
  const fingerprintKey = derive('card-fingerprint');
  const requestDigestKey = derive('idempotency-request');
  return {
    seal: async (card) => (await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(card))).setProtectedHeader(SEALING).encrypt(sealingKey)) as SealedCard,
    open: async (sealed) => {
      const { plaintext } = await compactDecrypt(sealed, sealingKey, { keyManagementAlgorithms: [SEALING.alg], contentEncryptionAlgorithms: [SEALING.enc] });
      return JSON.parse(new TextDecoder().decode(plaintext)) as ValidatedCard;
    },
    fingerprint: (pan) => createHmac('sha256', fingerprintKey).update(pan).digest('hex'),
    requestDigest: (canonicalRequest) => createHmac('sha256', requestDigestKey).update(canonicalRequest).digest('hex'),
  };
}
