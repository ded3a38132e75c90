import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox';

/**
 * Response schemas shared by several routes. Each has an `$id`, is registered once with
 * `app.addSchema` and referenced with `ref()`, so the OpenAPI document names it under
 * `components.schemas` and generated clients get one type for it.
 */
export const ErrorResponse = Type.Object(
  { success: Type.Literal(false), message: Type.String({ description: 'Names the offending field when a field is the cause' }) },
  {
    $id: 'ErrorResponse',
    description: 'Request-level failure: nothing was created or changed',
    examples: [{ success: false, message: 'card.pan must be string' }],
  },
);

/** Reference to a shared schema; typed as the schema itself so handlers stay checked. */
export function ref<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  if (!schema.$id) throw new Error('Only a schema with an $id can be shared');
  return Type.Unsafe<Static<T>>(Type.Ref(`${schema.$id}#`, options));
}

/** A string restricted to a list, documented as one `enum` rather than a union of constants. */
export function stringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

const ERROR_STATUSES = {
  400: { description: 'Invalid request; the message names the field' },
  401: { description: 'Missing or unknown API key' },
  403: { description: 'ClientId is not the tenant of the key' },
  404: { description: 'Not found' },
  409: {
    description:
      'Conflicts with the state of things, nothing changed: an Idempotency-Key reused with another body or whose first request is still running; a 3-D Secure completion sent before the cardholder finished the challenge (ask again; a completed one answers its result again, 200); a stale `rowVersion`',
  },
  410: { description: 'The 3-D Secure session expired or is no longer pending' },
  413: { description: 'Request body too large' },
  415: { description: 'Content-Type must be application/json (UTF-8, uncompressed)' },
  429: {
    description: 'Rate limit of the API key exceeded',
    headers: { 'retry-after': Type.Integer({ minimum: 1, description: 'Seconds until the next request may succeed' }) },
  },
  500: { description: 'Unexpected error; nothing is known to have changed' },
  503: {
    description:
      'Not answered in time, or Temporal or PostgreSQL away (what was asked may have taken effect: retry with the same Idempotency-Key): a payment that started and goes on is named in the message (`pay_…`; retry with the same Idempotency-Key, or `GET /payments/{id}`, to get its result); "not started" means nothing was charged; a 3-D Secure completion not answered says to send it again',
  },
} as const satisfies Record<number, SchemaOptions>;

/** The documented error answers of a route: the shared error body, described per status. */
export function errorResponses<S extends keyof typeof ERROR_STATUSES>(...statuses: S[]) {
  return Object.fromEntries(statuses.map((status) => [status, ref(ErrorResponse, ERROR_STATUSES[status])])) as Record<S, ReturnType<typeof ref<typeof ErrorResponse>>>;
}

/** Headers of admin routes (spec 5.2) besides the key itself, which the `apiKey` security scheme documents. */
export const AdminHeaders = Type.Object({
  ClientId: Type.String({ description: "The tenant's ClientId (parent company id)", examples: ['client-acme'] }),
  UserEmail: Type.String({ description: 'E-mail of the person or group acting, in UTF-8; recorded in the audit trail', examples: ['ops@example.com'] }),
});
