/**
 * An allowed origin as browsers send `Origin` (the RFC 6454 serialization): scheme and host in lower case, no
 * default port, an internationalized host in punycode. Kept so, an origin written `https://Shop.example:443` still
 * matches the `https://shop.example` a browser sends (compared exactly, it never would). Undefined for anything
 * that is not an http(s) origin alone (a path, a query, a fragment, credentials, a trailing slash) or that no browser
 * sends (a wildcard, a malformed host name, port 0).
 */
export function canonicalOrigin(written: string): string | undefined {
  if (written.length > 300 || !/^https?:\/\/[^/\s?#]+$/i.test(written)) return undefined;
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.port === '0' || !isHostBrowsersSend(url.hostname)) return undefined;
  return url.origin;
}

/**
 * A host name's label: letters, digits, hyphens (punycode's `xn--` included) and the underscores browsers take, 1 to
 * 63, neither first nor last a hyphen.
 */
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * A host a browser can send in `Origin`: an IP address (the URL parser has written it in its one form), or a name of
 * DNS labels. A wildcard (`https://*.shop.example`), an empty label or a label starting with a hyphen would be kept
 * and then match no browser's origin: every write from the storefront refused, and nobody told why.
 */
function isHostBrowsersSend(hostname: string): boolean {
  if (hostname.startsWith('[') || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(hostname)) return true;
  // A fully qualified name may end in its root's dot, which browsers keep.
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}
