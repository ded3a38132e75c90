/**
 * An allowed origin as browsers send `Origin` (the RFC 6454 serialization): scheme and host in lower case, no
 * default port, an internationalized host in punycode. Kept so, an origin written `https://Shop.example:443` still
 * matches the `https://shop.example` a browser sends (compared exactly, it never would). Undefined for anything
 * that is not an http(s) origin alone: a path, a query, a fragment, credentials, a trailing slash.
 */
export function canonicalOrigin(written: string): string | undefined {
  if (written.length > 300 || !/^https?:\/\/[^/\s?#]+$/i.test(written)) return undefined;
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    return undefined;
  }
  return url.username || url.password ? undefined : url.origin;
}
