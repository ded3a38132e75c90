import { DomainError } from '../errors.ts';

/**
 * Gateway credentials of a merchant account currency (spec 2.6). Stored sealed by the secret box; an answer only
 * ever shows a mask, and a mask sent back in an update stands for "keep what is stored".
 */
export const CREDENTIAL_FIELDS = ['apiKey', 'username', 'password', 'emailAddress', 'processorId'] as const;
export type CredentialField = (typeof CREDENTIAL_FIELDS)[number];
export type GatewayCredentials = Partial<Record<CredentialField, string>>;
/** Credentials as answered: every field named (spec 2.6 lists five), `null` where none is stored. */
export type MaskedCredentials = Record<CredentialField, string | null>;
/** Credentials as an update sends them: `null` says "none", as an absent field does (what an answer shows for none). */
export type IncomingCredentials = Partial<Record<CredentialField, string | null>>;

const MASK = '****';
/**
 * Below these lengths even the last 4 characters would give away too much of the value. A credential (a password, a
 * username) shows them from 12 characters on, a third at most; of an 8-character password they would be half. A bank
 * number shows them from 8 on, as bank statements do (a 9-digit routing number is public; an account number's last 4
 * are what its owner is shown everywhere).
 */
const SHORTEST_CREDENTIAL_WITH_TAIL = 12;
const SHORTEST_BANK_NUMBER_WITH_TAIL = 8;

const maskShorterThan = (shortestWithTail: number) => (value: string) => (value.length >= shortestWithTail ? `${MASK}${value.slice(-4)}` : MASK);

/** `****` plus the last 4 characters (`****` alone for values under 12 characters): enough to tell two values apart. */
export const maskSecret = maskShorterThan(SHORTEST_CREDENTIAL_WITH_TAIL);

/** A bank account or routing number as the audit keeps it: `****` plus its last 4 (`****` alone under 8 characters). */
export const maskBankNumber = maskShorterThan(SHORTEST_BANK_NUMBER_WITH_TAIL);

export function maskCredentials(credentials: GatewayCredentials): MaskedCredentials {
  const masked = {} as MaskedCredentials;
  for (const field of CREDENTIAL_FIELDS) {
    const value = credentials[field];
    masked[field] = value === undefined ? null : maskSecret(value);
  }
  return masked;
}

/**
 * The credentials an update leaves stored. `incoming` replaces the stored object field by field: a field equal to
 * the mask of the stored value keeps the stored secret, a value shaped like a mask of anything else is refused
 * (DomainError `validation`), any other value replaces it, an absent or `null` field is removed. No `incoming` object
 * keeps everything stored.
 */
export function mergeCredentials(stored: GatewayCredentials | undefined, incoming: IncomingCredentials | undefined): GatewayCredentials {
  if (incoming === undefined) return { ...(stored ?? {}) };
  const merged: GatewayCredentials = {};
  for (const field of CREDENTIAL_FIELDS) {
    const value = incoming[field];
    if (value === undefined || value === null) continue;
    const kept = stored?.[field];
    if (kept !== undefined && value === maskSecret(kept)) merged[field] = kept;
    // A mask of something else (a value changed since the form was read, or another currency's) is never a secret:
    // stored, it would fail every payment at the processor.
    else if (looksMasked(value)) throw new DomainError('validation', `${field} is a mask that matches no stored value of this currency: send the secret itself, or the mask it was read with`, { field: `gatewayCredentials.${field}` });
    else merged[field] = value;
  }
  return merged;
}

/** The credentials given, without the fields given as `null` ("none"), in the order given (stored as sent). */
export function givenCredentials(incoming: IncomingCredentials): GatewayCredentials {
  return Object.fromEntries(Object.entries(incoming).filter(([, value]) => value !== null)) as GatewayCredentials;
}

/** The shape of `maskSecret`'s answers. */
function looksMasked(value: string): boolean {
  return value.startsWith(MASK) && value.length <= MASK.length + 4;
}

export function sameCredentials(a: GatewayCredentials, b: GatewayCredentials): boolean {
  return CREDENTIAL_FIELDS.every((field) => a[field] === b[field]);
}

/** Parses a decrypted credentials document; anything but string fields is dropped (the document is ours). */
export function parseCredentials(json: string): GatewayCredentials {
  const parsed = JSON.parse(json) as Record<string, unknown>;
  const credentials: GatewayCredentials = {};
  for (const field of CREDENTIAL_FIELDS) {
    if (typeof parsed[field] === 'string') credentials[field] = parsed[field];
  }
  return credentials;
}

/** Merchant-account fields the audit keeps masked: bank numbers outlive a change there, and an audit is kept for good. */
export const MASKED_IN_AUDIT: ReadonlySet<string> = new Set(['accountNumber', 'routingNumber']);

/** The values as the audit may keep them: the bank numbers masked, everything else as given. */
export function maskedForAudit<T extends Record<string, unknown>>(values: T): T {
  const masked: Record<string, unknown> = { ...values };
  for (const field of MASKED_IN_AUDIT) {
    const value = masked[field];
    if (typeof value === 'string') masked[field] = maskBankNumber(value);
  }
  return masked as T;
}
