import { hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from 'jose';
import { createCardFingerprinter, createCardVault, type SealedCard, type SecurityCodeKeys } from '../../domain/crypto/card-vault.ts';
import type { ValidatedCard } from '../../domain/payments/pre-validation.ts';

const card: ValidatedCard = { pan: '4242424242424242', cvv: '739', expiryMonth: 12, expiryYear: 2040, bin: '42424242', last4: '4242', network: 'NetworkA' };
const dataEncryptionKey = Buffer.alloc(32, 3);
/** The vault's own envelope key, derived as the vault derives it: what anyone holding DATA_ENCRYPTION_KEY can open. */
const envelopeKey = new Uint8Array(hkdfSync('sha256', dataEncryptionKey, Buffer.alloc(0), 'card-vault', 32));

/** Security-code keys in memory: `destroy` forgets one, as the retention pass does. */
function keysInMemory() {
  const keys = new Map<string, Uint8Array>();
  let period = 0;
  let asked = 0;
  const store: SecurityCodeKeys = {
    async current() {
      asked++;
      const id = `cvv-${period}`;
      if (!keys.has(id)) keys.set(id, new Uint8Array(randomBytes(32)));
      return { id, key: keys.get(id)! };
    },
    find: async (id) => keys.get(id),
  };
  return { store, nextPeriod: () => period++, destroy: (id: string) => keys.delete(id), asked: () => asked };
}

describe('card vault', () => {
  it('seals a card as a compact JWE (dir, A256GCM) that shows no card data, and opens it whole while its key lives', async () => {
    const vault = createCardVault(dataEncryptionKey, keysInMemory().store);
    const sealed = await vault.seal(card);
    expect(decodeProtectedHeader(sealed)).toEqual({ alg: 'dir', enc: 'A256GCM' });
    expect(sealed).not.toMatch(/4242424242424242|"cvv"/);
    await expect(vault.open(sealed)).resolves.toEqual({ ...card, kept: false });
  });

  it('keeps the CVV out of what DATA_ENCRYPTION_KEY opens: once its key is destroyed, the card opens without it', async () => {
    const keys = keysInMemory();
    const vault = createCardVault(dataEncryptionKey, keys.store);
    const sealed = await vault.seal(card);

    const envelope = JSON.parse(new TextDecoder().decode((await compactDecrypt(sealed, envelopeKey)).plaintext)) as Record<string, unknown>;
    expect(envelope).toMatchObject({ pan: card.pan, cvv: '' });
    expect(Object.values(envelope)).not.toContain(card.cvv);
    expect(envelope.securityCode).toEqual({ keyId: 'cvv-0', sealed: expect.stringMatching(/^v1\./) });

    keys.nextPeriod();
    const later = await vault.seal(card);
    keys.destroy('cvv-0');
    // Still a checkout's card, not one kept for rebills: never charged as merchant-initiated for want of its CVV.
    await expect(vault.open(sealed)).resolves.toEqual({ ...card, cvv: '', kept: false });
    // A card sealed in a later period has a key of its own, still there.
    await expect(vault.open(later)).resolves.toEqual({ ...card, kept: false });
  });

  it('opens a card sealed before security codes had keys of their own (the CVV inline)', async () => {
    const legacy = (await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(card))).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(envelopeKey)) as SealedCard;
    await expect(createCardVault(dataEncryptionKey, keysInMemory().store).open(legacy)).resolves.toEqual({ ...card, kept: false });
  });

  it('seals a card without a CVV (a rebill\'s) without a security-code key', async () => {
    const keys = keysInMemory();
    const vault = createCardVault(dataEncryptionKey, keys.store);
    const sealed = await vault.seal({ ...card, cvv: '' });
    expect(keys.asked()).toBe(0);
    await expect(vault.open(sealed)).resolves.toEqual({ ...card, cvv: '', kept: true });
    // Sealed again as it was opened (a kept card re-sealed): how it was sealed is read, never stored.
    const resealed = await vault.seal(await vault.open(sealed));
    expect(JSON.parse(new TextDecoder().decode((await compactDecrypt(resealed, envelopeKey)).plaintext))).not.toHaveProperty('kept');
  });

  it('refuses an envelope altered or sealed under another key', async () => {
    const keys = keysInMemory();
    const vault = createCardVault(dataEncryptionKey, keys.store);
    const sealed = await vault.seal(card);
    const parts = sealed.split('.');
    parts[3] = parts[3]!.startsWith('A') ? `B${parts[3]!.slice(1)}` : `A${parts[3]!.slice(1)}`;
    await expect(vault.open(parts.join('.') as SealedCard)).rejects.toThrow();
    await expect(createCardVault(Buffer.alloc(32, 4), keys.store).open(sealed)).rejects.toThrow();
  });

  it('fingerprints a card number with a key of its own', () => {
    const fingerprint = createCardFingerprinter(dataEncryptionKey);
    expect(createCardVault(dataEncryptionKey, keysInMemory().store).fingerprint(card.pan)).toBe(fingerprint(card.pan));
    expect(fingerprint(card.pan)).not.toBe(createCardFingerprinter(Buffer.alloc(32, 4))(card.pan));
    expect(fingerprint(card.pan)).toMatch(/^[0-9a-f]{64}$/);
  });
});
