import { describe, expect, it } from 'vitest';
import { canonicalOrigin } from '../../domain/leads/origins.ts';

describe('allowed origins', () => {
  it('are kept as browsers send Origin: lower case, no default port, punycode', () => {
    expect(canonicalOrigin('HTTPS://Shop.Example:443')).toBe('https://shop.example');
    expect(canonicalOrigin('http://shop.example:80')).toBe('http://shop.example');
    expect(canonicalOrigin('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(canonicalOrigin('https://bücher.example')).toBe('https://xn--bcher-kva.example');
    expect(canonicalOrigin('http://[::1]:3000')).toBe('http://[::1]:3000');
    expect(canonicalOrigin('http://localhost:5173')).toBe('http://localhost:5173');
    expect(canonicalOrigin('https://my-shop.co.uk')).toBe('https://my-shop.co.uk');
    expect(canonicalOrigin('https://my_shop.example.')).toBe('https://my_shop.example.');
  });

  it('are refused when they are more than an origin', () => {
    for (const written of ['https://shop.example/', 'https://shop.example/path', 'https://shop.example?x', 'https://user:pw@shop.example', 'ftp://shop.example', 'null', 'https://', `https://${'a'.repeat(300)}.example`]) {
      expect(canonicalOrigin(written), written).toBeUndefined();
    }
  });

  it('are refused when no browser sends them: a wildcard, an empty or hyphen-edged label, port 0', () => {
    for (const written of ['https://*.shop.example', 'https://*', 'https://a..b.example', 'https://-x.example', 'https://x-.example', 'https://shop.example..', 'http://localhost:0', 'https://*.']) {
      expect(canonicalOrigin(written), written).toBeUndefined();
    }
  });
});
