import { DomainError } from '../../domain/errors.ts';

/** A header's value as Node read it: the first when the header came more than once. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A header holding text people write (`UserEmail: jürgen@exämple.com`), read as the UTF-8 its client sent. Node hands
 * header bytes over one per character (Latin-1), which would keep such a value as `jÃ¼rgen@exÃ¤mple.com`; bytes that
 * are not UTF-8 are refused (400 naming the header) rather than kept as something nobody sent.
 */
export function utf8HeaderValue(value: string | string[] | undefined, name: string): string | undefined {
  const text = headerValue(value);
  if (text === undefined || /^[\x00-\x7f]*$/.test(text)) return text;
  try {
    return utf8.decode(Buffer.from(text, 'latin1'));
  } catch {
    throw new DomainError('validation', `${name} must be UTF-8 text`, { field: name });
  }
}
