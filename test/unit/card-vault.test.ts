import { describe, expect, it } from 'vitest';
import { decodeProtectedHeader } from 'jose';
import { createCardVault, type SealedCard } from '../../domain/crypto/card-vault.ts';
import type { ValidatedCard } from '../../domain/payments/pre-validation.ts';

const card: ValidatedCard = { pan: '4242424242424242', cvv: '123', expiryMonth: 12, expiryYear: 2040, bin: '42424242', last4: '4242', network: 'NetworkA' };

describe('card vault', () => {
  const vault = createCardVault(Buffer.alloc(32, 3));

  it('seals a card as a compact JWE (dir, A256GCM) that shows no card data', async () => {
    const sealed = await vault.seal(card);
    expect(decodeProtectedHeader(sealed)).toEqual({ alg: 'dir', enc: 'A256GCM' });
    expect(sealed).not.toMatch(/4242424242424242|"cvv"/);
    await expect(vault.open(sealed)).resolves.toEqual(card);
  });

  it('refuses an envelope altered or sealed under another key', async () => {
    const sealed = await vault.seal(card);
    const parts = sealed.split('.');
    parts[3] = parts[3]!.startsWith('A') ? `B${parts[3]!.slice(1)}` : `A${parts[3]!.slice(1)}`;
    await expect(vault.open(parts.join('.') as SealedCard)).rejects.toThrow();
    await expect(createCardVault(Buffer.alloc(32, 4)).open(sealed)).rejects.toThrow();
  });

  it('fingerprints a card number with a key of its own', () => {
    expect(vault.fingerprint(card.pan)).toBe(vault.fingerprint(card.pan));
    expect(vault.fingerprint(card.pan)).not.toBe(createCardVault(Buffer.alloc(32, 4)).fingerprint(card.pan));
    expect(vault.fingerprint(card.pan)).toMatch(/^[0-9a-f]{64}$/);
  });
});
