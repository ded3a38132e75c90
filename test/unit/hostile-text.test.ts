import { describe, expect, it } from 'vitest';
import { isHostileText, storableText } from '../../domain/validation/hostile-text.ts';

describe('storableText: text from outside made storable, not refused', () => {
  it('replaces NUL bytes and broken surrogates, and cuts to length without halving a pair', () => {
    expect(storableText('ok\u0000done', 100)).toBe('ok\ufffddone');
    expect(storableText('a\ud800b', 100)).toBe('a\ufffdb');
    expect(storableText('ab😀cd', 3)).toBe('ab');
    expect(storableText('ab😀cd', 4)).toBe('ab😀');
    expect(storableText('plain', 3)).toBe('pla');
  });

  it('always yields text PostgreSQL takes, never longer than asked', () => {
    for (const text of ['\u0000', '\udc00\ud800', '😀'.repeat(10), 'x\u0000😀\ud83d']) {
      for (const length of [0, 1, 2, 3, 5]) {
        const stored = storableText(text, length);
        expect(isHostileText(stored)).toBe(false);
        expect(stored.length).toBeLessThanOrEqual(length);
      }
    }
  });
});
