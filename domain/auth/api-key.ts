import { DomainError } from '../errors.ts';
import { isValidEmail, normalizeEmail } from '../payments/card.ts';

/** Who a valid API key speaks for. */
export interface ApiPrincipal {
  readonly apiKeyId: number;
  readonly tenantId: number;
  readonly clientId: string;
  readonly rateLimitPerMinute: number | null;
}

/** Accepts both `<API_KEY>` and `Bearer <API_KEY>` (spec 5.1 shows both). */
export function apiKeyFromAuthorization(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const key = /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '').trim() : value;
  return key === '' ? undefined : key;
}

/** The caller of an admin route (spec 5.2): key, the tenant it claims, and who is acting. */
export interface AdminCaller extends ApiPrincipal {
  readonly userEmail: string;
}

/**
 * Who is acting on an admin change (`UserEmail`, GraphQL `userEmail`): an address as a payment takes a customer's, in
 * any letter case. The audit trail shows it to admin UIs, so no markup, quotes or stray brackets pass as an actor.
 */
export function isActorEmail(text: string): boolean {
  // Kept as sent, so sent as kept: no white space around it, nothing IDNA would drop (a zero-width space), only case.
  const normalized = normalizeEmail(text);
  return text.length <= 320 && isValidEmail(normalized) && normalized === text.toLowerCase();
}

/** Checks the `ClientId` and `UserEmail` headers against an authenticated key. */
export function authorizeAdmin(principal: ApiPrincipal, clientId: string | undefined, userEmail: string | undefined): AdminCaller {
  if (!clientId || clientId.trim() === '') throw new DomainError('validation', 'Missing ClientId header', { field: 'ClientId' });
  if (clientId.trim() !== principal.clientId) throw new DomainError('forbidden', 'ClientId does not match the API key');
  if (!userEmail || userEmail.trim() === '') throw new DomainError('validation', 'Missing UserEmail header', { field: 'UserEmail' });
  const email = userEmail.trim();
  if (!isActorEmail(email)) throw new DomainError('validation', 'UserEmail must be an e-mail address', { field: 'UserEmail' });
  return { ...principal, userEmail: email };
}
