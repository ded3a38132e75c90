import { Type, type Static } from '@sinclair/typebox';
import { ANY_RECORD_KEY } from '../validation/json-schema.ts';

/** Integers beyond this are no card's month or year, and not worth reading. */
const INT32 = 2 ** 31 - 1;

const str = (maxLength: number, description?: string) => Type.Optional(Type.String({ maxLength, ...(description ? { description } : {}) }));

const Address = Type.Object(
  {
    firstName: str(100),
    lastName: str(100),
    street: str(200),
    city: str(100),
    state: str(100),
    zip: str(20),
    country: str(2, 'ISO 3166-1 alpha-2'),
  },
  { additionalProperties: false },
);

export const SubmitCard = Type.Object(
  {
    name: str(100, 'Cardholder name'),
    // The card's own rules (a number of 12-19 digits, a real month, a CVV of its network's length) are spec 7.1's
    // `Failed` outcomes; these bounds only keep text and numbers no checkout could send out of the gateway.
    pan: str(64, 'Card number (digits; spaces and dashes are ignored)'),
    expiryMonth: Type.Optional(Type.Integer({ minimum: -INT32, maximum: INT32 })),
    expiryYear: Type.Optional(Type.Integer({ minimum: -INT32, maximum: INT32 })),
    cvv: str(64),
    bin: str(8, 'First 6-8 digits; required with `encrypted`; sent with `pan`, they must be its own'),
    lastFour: str(4, 'Required with `encrypted`; sent with `pan`, they must be its own'),
    brand: str(30),
    encrypted: str(8192, 'Card encrypted on the client (compact JWE); see README. Never with `pan`'),
  },
  { additionalProperties: false },
);

/**
 * Body of `POST /api/{productId}` (spec 2.1). Types are enforced here (a wrong type is a request-level
 * 400); business rules (missing e-mail, bad card number, ...) are pre-processing outcomes answered with
 * HTTP 200 and `info: Failed` (spec 7.1).
 */
export const SubmitRequest = Type.Object(
  {
    card: Type.Optional(SubmitCard),
    // An address over 320 characters is spec 7.1's `Invalid Email`; this bound keeps huge text out.
    email: str(1024),
    amount: Type.Optional(Type.Number({ minimum: 0, description: 'When given, must equal the product price' })),
    serviceSession: str(200),
    partnerSession: str(1000, 'Persisted for webhook and lead correlation only when 50 characters or fewer'),
    phone: str(40),
    address: Type.Optional(Address),
    shippingAddress: Type.Optional(Address),
    mid: str(64),
    // A record's key schema is a pattern to a validator: `propertyNames` holds the keys' length, and the pattern takes
    // every key (`.` would miss one holding a line break, leaving its value unchecked).
    props: Type.Optional(
      Type.Record(Type.String({ pattern: ANY_RECORD_KEY }), Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean(), Type.Null()]), { maxProperties: 50, propertyNames: { minLength: 1, maxLength: 100 } }),
    ),
    campaignId: Type.Optional(Type.Integer({ description: 'Deprecated; ignored. Use campaignName' })),
    affiliateId: Type.Optional(Type.Integer({ description: 'Deprecated; ignored. Use affiliateName' })),
    campaignName: str(200),
    affiliateName: str(200),
    // Kept as two columns of 200 (primary, secondary): a longer part is refused here, not by the database mid-payment.
    subAffiliate: Type.Optional(
      Type.String({ maxLength: 401, pattern: '^[^_]{0,200}(_[\\s\\S]{0,200})?$', description: '`primary_secondary` (spec 2.1); each part at most 200 characters' }),
    ),
    trackerClickId: str(200),
    threeDSecure: Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()), cancelOnFail: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
    useragent: str(1000),
    ip: str(64),
    cascade: Type.Optional(Type.Boolean()),
    mobileWalletA: Type.Optional(Type.Boolean()),
    storefront: Type.Optional(
      Type.Object(
        { savePaymentMethod: Type.Optional(Type.Boolean()), usePreviousPaymentMethod: Type.Optional(Type.Boolean()), optIn: Type.Optional(Type.Boolean()) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type SubmitRequest = Static<typeof SubmitRequest>;

/** Body of `POST /api/{productId}/3ds` (spec 2.2). */
export const ThreeDSecureRequest = Type.Object(
  {
    threeDSecureId: Type.String({ minLength: 1, maxLength: 64 }),
    serviceSession: str(200),
    partnerSession: Type.Optional(Type.String({ maxLength: 50 })),
  },
  { additionalProperties: false },
);
export type ThreeDSecureRequest = Static<typeof ThreeDSecureRequest>;
