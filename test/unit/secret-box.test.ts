import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../../domain/crypto/secret-box.ts';

describe('secret box', () => {
  it('round-trips and detects tampering', () => {
    const box = createSecretBox(Buffer.alloc(32, 7));
    const sealed = box.seal('whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.open(sealed)).toBe('whsec_abc');
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => box.open(tampered)).toThrow();
  });

  it('cannot be opened under another key', () => {
    const sealed = createSecretBox(Buffer.alloc(32, 7)).seal('whsec_abc');
    expect(() => createSecretBox(Buffer.alloc(32, 8)).open(sealed)).toThrow();
  });
});
