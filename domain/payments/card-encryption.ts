import { CompactEncrypt, compactDecrypt, exportJWK, exportPKCS8, generateKeyPair, importPKCS8, type JWK } from 'jose';

/**
 * Client-side card encryption: a checkout page encrypts the card with the tenant's public key as a
 * compact JWE (RSA-OAEP-256 + A256GCM), so the page never posts a plain PAN. The gateway decrypts it
 * with the private key, which is stored sealed and never leaves the gateway.
 */
export const CARD_JWE_ALGORITHM = 'RSA-OAEP-256';
export const CARD_JWE_ENCRYPTION = 'A256GCM';

export interface CardKeyPair {
  readonly publicJwk: JWK;
  readonly privatePkcs8: string;
}

export async function generateCardKeyPair(kid: string): Promise<CardKeyPair> {
  const { publicKey, privateKey } = await generateKeyPair(CARD_JWE_ALGORITHM, { modulusLength: 2048, extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: CARD_JWE_ALGORITHM, use: 'enc' };
  return { publicJwk, privatePkcs8: await exportPKCS8(privateKey) };
}

/** What the encrypted payload carries (JSON): the same card fields as a plain submit. */
export interface EncryptedCardPayload {
  readonly pan: string;
  readonly cvv?: string;
  readonly expiryMonth?: number;
  readonly expiryYear?: number;
  readonly name?: string;
}

/** Returns the card, or undefined when the JWE cannot be decrypted or is not a card (never says why). */
export async function decryptCard(jwe: string, privatePkcs8: string): Promise<EncryptedCardPayload | undefined> {
  try {
    const key = await importPKCS8(privatePkcs8, CARD_JWE_ALGORITHM);
    const { plaintext, protectedHeader } = await compactDecrypt(jwe, key, { keyManagementAlgorithms: [CARD_JWE_ALGORITHM], contentEncryptionAlgorithms: [CARD_JWE_ENCRYPTION] });
    if (protectedHeader.alg !== CARD_JWE_ALGORITHM) return undefined;
    const payload = JSON.parse(new TextDecoder().decode(plaintext)) as Record<string, unknown>;
    if (typeof payload.pan !== 'string') return undefined;
    return {
      pan: payload.pan,
      cvv: typeof payload.cvv === 'string' ? payload.cvv : undefined,
      expiryMonth: typeof payload.expiryMonth === 'number' ? payload.expiryMonth : undefined,
      expiryYear: typeof payload.expiryYear === 'number' ? payload.expiryYear : undefined,
      name: typeof payload.name === 'string' ? payload.name : undefined,
    };
  } catch {
    return undefined;
  }
}

/** What a checkout page does (shown in the README; used by tests). */
export async function encryptCard(card: EncryptedCardPayload, publicJwk: JWK): Promise<string> {
  const { importJWK } = await import('jose');
  const key = await importJWK(publicJwk, CARD_JWE_ALGORITHM);
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(card)))
    .setProtectedHeader({ alg: CARD_JWE_ALGORITHM, enc: CARD_JWE_ENCRYPTION, kid: publicJwk.kid })
    .encrypt(key);
}
