/**
 * E-mail addresses as callers write them: `a@shop.com`, `<a@shop.com>` or `Shop <a@shop.com>` (the display name
 * optionally quoted: `"Shop, Inc." <a@shop.com>`). Exactly one address per string: a list (`a@x.com, b@y.com`), a
 * group (`Team: a@x.com;`) or an unquoted name carrying `,` `;` `:` `@` is refused, because mail libraries read
 * such a string as several addresses, and the one the sender-domain check saw would not be the one SMTP uses.
 * Only what SMTP can carry is accepted: no line breaks (header injection), an ASCII local part and a domain of DNS
 * labels; the domain is compared case-insensitively. The name and the bare address are kept apart, so the SMTP
 * envelope and headers are built from them and never from the caller's string.
 */
export interface ParsedAddress {
  /** The display name without quotes; empty when there is none. */
  readonly name: string;
  /** The bare address, used in the SMTP envelope. */
  readonly address: string;
  /** Lower-case domain of the address. */
  readonly domain: string;
  /** The address rewritten canonically (`Shop <a@shop.com>`, the name quoted when it needs it): what is stored. */
  readonly formatted: string;
}

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
/** A display name without quotes: RFC 5322 atext, spaces, dots and non-ASCII letters; no `, ; : @ < > ( ) [ ] \ "`. */
const UNQUOTED_NAME = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~. \u00A0-\uFFFF-]*$/;
const QUOTED_NAME = /^"((?:[^"\\]|\\[\x20-\x7E])*)"$/;
/** `name <address>`: the name is everything before the only `<`; the address sits alone between `<` and the final `>`. */
const WITH_ANGLE_BRACKETS = /^([^<>]*)<([^<>\s]+)>$/;
/** A name that can be written without quotes in a header. */
const PLAIN_NAME = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]*$/;

/** The longest address string taken (and stored), display name included. */
const MAX_ADDRESS_LENGTH = 320;

const invalid = (written: string) => `is not a valid e-mail address: ${written}`;

/** The display name the caller wrote, unquoted; undefined when it could be read as more than a name. */
function nameOf(written: string): string | undefined {
  const trimmed = written.trim();
  const quoted = QUOTED_NAME.exec(trimmed);
  if (quoted) return quoted[1]!.replace(/\\(.)/g, '$1');
  if (trimmed.includes('"')) return undefined;
  return UNQUOTED_NAME.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : undefined;
}

/** `name <address>` as a header shows it: quoted (with escapes) unless the name is plain words. */
export function formatAddress(name: string, address: string): string {
  if (name === '') return address;
  return PLAIN_NAME.test(name) ? `${name} <${address}>` : `"${name.replace(/(["\\])/g, '\\$1')}" <${address}>`;
}

/** The address, or a sentence saying why it is not one. */
export function parseAddress(written: string): ParsedAddress | string {
  if (/[\r\n]/.test(written)) return 'must not contain line breaks';
  const trimmed = written.trim();
  let name = '';
  let address = trimmed;
  const bracketed = WITH_ANGLE_BRACKETS.exec(trimmed);
  if (bracketed) {
    const parsedName = nameOf(bracketed[1]!);
    if (parsedName === undefined) return `${invalid(written)} (exactly one address; quote a display name containing , ; : or @)`;
    name = parsedName;
    address = bracketed[2]!;
  } else if (/[<>,;:\s"]/.test(trimmed)) {
    return `${invalid(written)} (exactly one address; quote a display name containing , ; : or @)`;
  }
  if (address.length > 254) return 'is longer than 254 characters';
  const at = address.lastIndexOf('@');
  if (at <= 0) return invalid(written);
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length > 64 || !LOCAL_PART.test(local) || !DOMAIN.test(domain)) return invalid(written);
  const formatted = formatAddress(name, address);
  // Quoting and escaping can lengthen what the caller sent; what is stored is held to the limit it was checked against.
  if (formatted.length > MAX_ADDRESS_LENGTH) return `is longer than ${MAX_ADDRESS_LENGTH} characters as written in a header (a shorter display name fits)`;
  return { name, address, domain: domain.toLowerCase(), formatted };
}

/** `to`, `cc` and `bcc` take one address or a list of them. */
export function addressList(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}
