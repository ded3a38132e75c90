/**
 * The failures of the e-mail API (spec 7.2): each transport maps the kind to a status and the spec's `error`
 * string in one place. Validation details name every offending field (`emails[3].to[0]`), so a batch names
 * the item that was refused.
 */
export type EmailFailure =
  | { readonly kind: 'validation'; readonly details: Readonly<Record<string, string>> }
  | { readonly kind: 'invalid_tenant_key' }
  | { readonly kind: 'unauthorized_domain'; readonly domain: string; readonly field: string }
  | { readonly kind: 'idempotency_conflict'; readonly message: string }
  /** The e-mails are stored but their delivery could not be confirmed started: a retry with the same key starts it, never twice. */
  | { readonly kind: 'delivery_not_started' };

export class EmailRequestError extends Error {
  constructor(readonly failure: EmailFailure) {
    super(failure.kind);
    this.name = 'EmailRequestError';
  }
}

export const emailValidationError = (details: Record<string, string>) => new EmailRequestError({ kind: 'validation', details });
