import { Type, type Static } from '@sinclair/typebox';
import { CARD_NETWORKS } from '../../domain/catalog/product.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/webhooks/events.ts';
import { int4 } from '../../schema/inputs/int4.ts';
import { MerchantAccountProvisionInput, Money } from '../../schema/inputs/merchant-account.input.ts';

const Slug = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'Stable identity of the record in the fixture' });

const ApiKeyInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    /** Optional fixed key (demo and test fixtures); otherwise one is generated and printed once. */
    value: Type.Optional(Type.String({ minLength: 24, maxLength: 512 })),
  },
  { additionalProperties: false },
);

const SubscriptionPlanInput = Type.Object(
  {
    recurringAmount: Money,
    intervalDays: Type.Integer({ minimum: 1, maximum: 3650 }),
    trialDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650 })),
    gracePeriodDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })),
    /** Billing period and trial in seconds instead of days (test and demo fixtures). */
    intervalSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 * 86_400 })),
    trialSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650 * 86_400 })),
    /** Seconds before each retry of a declined rebill, by decline group (hard declines are never retried). */
    dunning: Type.Optional(
      Type.Object(
        {
          insufficientFundsRetrySeconds: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 365 * 86_400 }), { maxItems: 10 })),
          otherRetrySeconds: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 365 * 86_400 }), { maxItems: 10 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const ProductInput = Type.Object(
  {
    slug: Slug,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    application: Type.Optional(Type.String({ pattern: Slug.pattern, description: "Slug of the tenant's application selling it; the first application when absent" })),
    price: Money,
    currency: Type.String({ format: 'currency' }),
    acceptedNetworks: Type.Optional(Type.Array(Type.Union(CARD_NETWORKS.map((n) => Type.Literal(n))), { uniqueItems: true })),
    subscriptionPlan: Type.Optional(Type.Union([SubscriptionPlanInput, Type.Null()])),
    velocity: Type.Optional(
      Type.Object(
        {
          cardSubmitLimit: Type.Optional(int4({ minimum: 1 })),
          cardSubmitWindowSeconds: Type.Optional(int4({ minimum: 1 })),
          emailSubmitLimit: Type.Optional(int4({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Origin = Type.String({ pattern: '^https?://[^/\\s]+$', maxLength: 300, description: 'scheme://host[:port], exactly as browsers send Origin' });

const AllowedOrigins = Type.Array(Origin, { maxItems: 100, uniqueItems: true });

const ApplicationInput = Type.Object(
  {
    slug: Slug,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    allowedOrigins: Type.Optional(AllowedOrigins),
  },
  { additionalProperties: false, description: 'A storefront of the tenant: products and lead keys belong to one' },
);

/**
 * One lead key pair, generated once (printed once) unless given; given keys replace the stored ones. Both keys
 * of a pair share the environment of their prefix (`pk_test_`/`sk_test_` or `pk_live_`/`sk_live_`).
 */
const LeadsInput = Type.Object(
  {
    application: Type.Optional(Type.String({ pattern: Slug.pattern, description: 'Slug of the application; the first application when absent' })),
    environment: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')], { description: 'Default live' })),
    /** The application's allowed origins (kept for fixtures written before applications existed). */
    allowedOrigins: Type.Optional(AllowedOrigins),
    publishableKey: Type.Optional(Type.String({ pattern: '^pk_(test|live)_[A-Za-z0-9_-]{16,200}$' })),
    secretKey: Type.Optional(Type.String({ pattern: '^sk_(test|live)_[A-Za-z0-9_-]{16,200}$' })),
  },
  { additionalProperties: false },
);

const EmailInput = Type.Object(
  {
    tenantKey: Type.Optional(Type.String({ format: 'uuid' })),
    senderDomains: Type.Array(Type.String({ pattern: '^(?=.{1,253}$)([a-z0-9-]+\\.)+[a-z]{2,}$' }), { maxItems: 100, uniqueItems: true }),
  },
  { additionalProperties: false },
);

const WebhookEndpointInput = Type.Object(
  {
    slug: Slug,
    url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
    // A type no event has would make the endpoint receive nothing, silently.
    eventTypes: Type.Optional(Type.Array(Type.Unsafe<WebhookEventType>({ type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }), { uniqueItems: true })),
    secret: Type.Optional(Type.String({ pattern: '^whsec_[A-Za-z0-9+/]{32,}={0,2}$', maxLength: 200 })),
  },
  { additionalProperties: false },
);

const BlocklistInput = Type.Object(
  {
    /** Checked and kept as the submit checks and keeps an address (`isValidEmail`, `normalizeEmail`), in `parseFixture`. */
    emails: Type.Optional(Type.Array(Type.String({ minLength: 3, maxLength: 320 }), { uniqueItems: true })),
    /** Card numbers are stored as keyed fingerprints only, never as given. */
    cards: Type.Optional(Type.Array(Type.String({ pattern: '^\\d{12,19}$' }), { uniqueItems: true })),
    bins: Type.Optional(Type.Array(Type.String({ pattern: '^\\d{6,8}$' }), { uniqueItems: true })),
    binCountries: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Z]{2}$' }), { uniqueItems: true })),
  },
  { additionalProperties: false },
);

export const TenantFixture = Type.Object(
  {
    slug: Slug,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    clientId: Type.String({ minLength: 1, maxLength: 64, description: 'Value of the ClientId header (parent company id)' }),
    parentCompany: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: 'Left out: kept as it is; null: none' })),
    rateLimitPerMinute: Type.Optional(Type.Union([int4({ minimum: 1 }), Type.Null()])),
    apiKeys: Type.Optional(Type.Array(ApiKeyInput)),
    applications: Type.Optional(Type.Array(ApplicationInput, { maxItems: 100, description: 'A tenant without any gets one application, `default`' })),
    products: Type.Optional(Type.Array(ProductInput)),
    merchantAccounts: Type.Optional(Type.Array(MerchantAccountProvisionInput)),
    leads: Type.Optional(LeadsInput),
    email: Type.Optional(EmailInput),
    webhookEndpoints: Type.Optional(Type.Array(WebhookEndpointInput)),
    blocklist: Type.Optional(BlocklistInput),
  },
  { additionalProperties: false },
);
export type TenantFixture = Static<typeof TenantFixture>;

export const ProvisioningFixture = Type.Object(
  { $schema: Type.Optional(Type.String()), tenants: Type.Array(TenantFixture, { minItems: 1 }) },
  { additionalProperties: false },
);
export type ProvisioningFixture = Static<typeof ProvisioningFixture>;
