import { describe, expect, it } from 'vitest';
import { canonicalOrigin } from '../../domain/leads/origins.ts';

describe('allowed origins', () => {
  it('are kept as browsers send Origin: lower case, no default port, punycode', () => {
    expect(canonicalOrigin('HTTPS://Shop.Example:443')).toBe('https://shop.example');
    expect(canonicalOrigin('http://shop.example:80')).toBe('http://shop.example');
    expect(canonicalOrigin('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(canonicalOrigin('https://bücher.example')).toBe('https://xn--bcher-kva.example');
  });

  it('are refused when they are more than an origin', () => {
    for (const written of ['https://shop.example/', 'https://shop.example/path', 'https://shop.example?x', 'https://user:pw@shop.example', 'ftp://shop.example', 'null', 'https://', `https://${'a'.repeat(300)}.example`]) {
      expect(canonicalOrigin(written), written).toBeUndefined();
    }
  });
});
