import { Type, type Static } from '@sinclair/typebox';
import { EMAIL_LIMITS } from './limits.ts';

const Address = Type.String({ minLength: 1, maxLength: EMAIL_LIMITS.addressLength, description: '`a@shop.com` or `Shop <a@shop.com>`' });
const Addresses = (description: string) =>
  Type.Union([Address, Type.Array(Address, { maxItems: EMAIL_LIMITS.recipientsPerEmail })], { description });

export const TEMPLATE_TYPES = ['react', 'string'] as const;
export type TemplateType = (typeof TEMPLATE_TYPES)[number];

const emailFields = {
  from: Type.String({ minLength: 1, maxLength: EMAIL_LIMITS.addressLength, description: 'Sender; its domain must be authorized for the tenant', examples: ['Shop <orders@shop.example>'] }),
  to: Addresses('Recipient(s)'),
  subject: Type.String({ minLength: 1, maxLength: EMAIL_LIMITS.subjectLength }),
  replyTo: Type.Optional(Type.String({ minLength: 1, maxLength: EMAIL_LIMITS.addressLength, description: 'Any address' })),
  cc: Type.Optional(Addresses('Copy recipient(s)')),
  bcc: Type.Optional(Addresses('Blind-copy recipient(s): in the SMTP envelope, never in the headers')),
  templateType: Type.Unsafe<TemplateType>({ type: 'string', enum: [...TEMPLATE_TYPES], description: '`react`: a built-in template; `string`: HTML in templateContent' }),
  templateName: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Required for `react`: generic, order-confirmation or welcome-membership' })),
  templateContent: Type.Optional(
    Type.String({ minLength: 1, maxLength: EMAIL_LIMITS.templateContentLength, description: 'Required for `string`: HTML with {{variable}} and {{#if variable}}...{{/if}}' }),
  ),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: `Values that populate the template; objects and arrays nest at most ${EMAIL_LIMITS.dataDepth} levels` })),
};

const IdempotencyKey = Type.Optional(
  Type.String({
    minLength: EMAIL_LIMITS.idempotencyKeyLength.min,
    maxLength: EMAIL_LIMITS.idempotencyKeyLength.max,
    description: 'Repeats within 7 days return the first answer and send nothing; derived from the content when absent',
  }),
);

/**
 * A bare UUID (any case). ajv's `uuid` format also admits `urn:uuid:...`, which PostgreSQL's uuid type refuses:
 * the pattern keeps the check to what the database takes.
 */
export const UUID_PATTERN = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';
const TenantKey = Type.String({ pattern: UUID_PATTERN, description: 'UUID of the account (spec 5.4)' });

/** Body of `POST /api/email` (spec 2.5). */
export const SendEmailRequest = Type.Object({ tenant_key: TenantKey, ...emailFields, idempotencyKey: IdempotencyKey }, { additionalProperties: false });
export type SendEmailRequest = Static<typeof SendEmailRequest>;

export const BatchEmailItem = Type.Object(emailFields, { additionalProperties: false });
export type BatchEmailItem = Static<typeof BatchEmailItem>;

/** Body of `POST /api/email/batch` (spec 2.5): one idempotency key for the whole batch. */
export const BatchEmailRequest = Type.Object(
  {
    tenant_key: TenantKey,
    emails: Type.Array(BatchEmailItem, { minItems: 1, maxItems: EMAIL_LIMITS.batchSize }),
    idempotencyKey: IdempotencyKey,
  },
  { additionalProperties: false },
);
export type BatchEmailRequest = Static<typeof BatchEmailRequest>;
