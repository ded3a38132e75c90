import { createHmac, hkdfSync } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import type { ValidatedCard } from '../payments/pre-validation.ts';
import { createSecretBox, type SecretBox } from './secret-box.ts';

/** Sealed card data as it travels through Temporal: a compact JWE, ciphertext only. */
export type SealedCard = string & { readonly __sealed: unique symbol };

/**
 * Keeps card numbers out of Temporal history, the database and logs: the gateway seals the card
 * before it enters a workflow, only the authorization activity opens it, and what is stored is a
 * keyed fingerprint (HMAC-SHA256 of the PAN) for blocklists and velocity.
 * Every key derives from DATA_ENCRYPTION_KEY with HKDF, so none is the key of another use.
 *
 * The security code is sealed apart, under a short-lived key (`SecurityCodeKeys`) that is destroyed soon after the
 * payment needed it: PCI DSS allows no CVV kept after authorization, even encrypted, and a payment's history lives on
 * for the namespace's retention. Once its key is gone, the sealed card in a history opens without a security code,
 * whoever holds DATA_ENCRYPTION_KEY.
 */
export interface CardVault {
  seal(card: ValidatedCard): Promise<SealedCard>;
  /** The card; its `cvv` is empty when it had none or when the key its security code was sealed under is destroyed. */
  open(sealed: SealedCard): Promise<OpenedCard>;
  fingerprint(pan: string): string;
  /**
   * Keyed digest (HMAC-SHA256) of a request an Idempotency-Key is bound to. Keyed, so a database reader cannot
   * test guesses against it; callers put the card's fingerprint in the request, never the PAN or CVV.
   */
  requestDigest(canonicalRequest: string): string;
}

/** A card as opened, with how it was sealed. */
export interface OpenedCard extends ValidatedCard {
  /**
   * Sealed without a security code: a card kept for rebills, charged without its holder. Never a checkout's card, which
   * always carries one, even once the key of its security code is destroyed (its `cvv` is then empty, `kept` false).
   */
  readonly kept: boolean;
}

/** A key security codes are sealed under: random, kept (wrapped) only until it is destroyed. */
export interface SecurityCodeKey {
  readonly id: string;
  readonly key: Uint8Array;
}

/** The short-lived keys of security codes (a port: the database keeps them, and forgets them when due). */
export interface SecurityCodeKeys {
  /** The key to seal with now. */
  current(): Promise<SecurityCodeKey>;
  /** The key of that id, or undefined once it is destroyed (or due to be). */
  find(id: string): Promise<Uint8Array | undefined>;
}

// A standard envelope (RFC 7516): the key is used directly for AES-256-GCM, nothing is wrapped.
const SEALING = { alg: 'dir', enc: 'A256GCM' } as const;
const DECRYPTION = { keyManagementAlgorithms: [SEALING.alg], contentEncryptionAlgorithms: [SEALING.enc] };

/**
 * What the card's envelope holds: the card without its CVV, and the CVV sealed apart (when it had one), with the id of
 * its key. That inner seal is the secret box's AES-256-GCM: a tenth of a JWE's cost, and it never leaves the envelope.
 */
type SealedCardContent = ValidatedCard & { readonly securityCode?: { readonly keyId: string; readonly sealed: string } };

const deriveKey = (dataEncryptionKey: Buffer, info: string) => new Uint8Array(hkdfSync('sha256', dataEncryptionKey, Buffer.alloc(0), info, 32));

/** The keyed card-number fingerprint alone (provisioning's blocklists need nothing else of the vault). */
export function createCardFingerprinter(dataEncryptionKey: Buffer): (pan: string) => string {
  const fingerprintKey = deriveKey(dataEncryptionKey, 'card-fingerprint');
  return (pan) => createHmac('sha256', fingerprintKey).update(pan).digest('hex');
}

/** Wraps security-code keys for storage; `id` tells wrappers apart without saying anything of their key. */
export interface KeyWrapper extends SecretBox {
  readonly id: string;
}

/** The key wrapper of a DATA_ENCRYPTION_KEY (AES-256-GCM under a key of its own, derived like the vault's). */
export function createSecurityCodeKeyWrapper(dataEncryptionKey: Buffer): KeyWrapper {
  const wrappingKey = Buffer.from(deriveKey(dataEncryptionKey, 'security-code-key-wrap'));
  return { ...createSecretBox(wrappingKey), id: createHmac('sha256', wrappingKey).update('key-wrapper-id').digest('hex').slice(0, 8) };
}

export function createCardVault(dataEncryptionKey: Buffer, securityCodeKeys: SecurityCodeKeys): CardVault {
  const sealingKey = deriveKey(dataEncryptionKey, 'card-vault');
  const requestDigestKey = deriveKey(dataEncryptionKey, 'idempotency-request');
  const encrypt = (plaintext: string, key: Uint8Array) => new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader(SEALING).encrypt(key);
  const decrypt = async (sealed: string, key: Uint8Array) => new TextDecoder().decode((await compactDecrypt(sealed, key, DECRYPTION)).plaintext);

  const sealSecurityCode = async (cvv: string) => {
    const { id, key } = await securityCodeKeys.current();
    return { keyId: id, sealed: createSecretBox(Buffer.from(key)).seal(cvv) };
  };
  const openSecurityCode = async ({ keyId, sealed }: NonNullable<SealedCardContent['securityCode']>) => {
    const key = await securityCodeKeys.find(keyId);
    return key ? createSecretBox(Buffer.from(key)).open(sealed) : '';
  };

  return {
    async seal(opened) {
      const { kept: _howItWasSealed, ...card } = opened as Partial<OpenedCard> & ValidatedCard;
      const content: SealedCardContent = card.cvv ? { ...card, cvv: '', securityCode: await sealSecurityCode(card.cvv) } : card;
      return (await encrypt(JSON.stringify(content), sealingKey)) as SealedCard;
    },
    async open(sealed) {
      // Cards sealed before security codes had keys of their own carry the CVV inline (`securityCode` absent).
      const { securityCode, ...card } = JSON.parse(await decrypt(sealed, sealingKey)) as SealedCardContent;
      return securityCode === undefined ? { ...card, kept: !card.cvv } : { ...card, cvv: await openSecurityCode(securityCode), kept: false };
    },
    fingerprint: createCardFingerprinter(dataEncryptionKey),
    requestDigest: (canonicalRequest) => createHmac('sha256', requestDigestKey).update(canonicalRequest).digest('hex'),
  };
}
