import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { int4, withIntegerBounds } from './int4.ts';
import { MerchantAccountFields } from './merchant-account.input.ts';

const nullableText = (maxLength = 255) => Type.Union([Type.String({ maxLength }), Type.Null()]);
const nullableInteger = () => Type.Union([Type.Integer(), Type.Null()]);

/** Fields of provisioning that spec 2.6 does not expose or that are names resolved from an id. */
const { gateway: _gateway, vertical: _vertical, brand: _brand, midPortalUrl: _portal, chargebackMitigationProvider: _provider, processorPortalAccess: _access, ...writable } =
  MerchantAccountFields;

/**
 * Body of `PUT /api/admin/merchantaccounts/{id}` and of the GraphQL `updateMerchantAccount` input: a merchant account
 * (spec 2.6). `rowVersion` is required (the version the caller read); every other field is optional and an omitted one
 * keeps its value. Identity fields (`id`, `mid`, `companyId`, `company`, `gatewayId`, `gateway`, `parentCompanyId`,
 * `parentCompany`) are read-only: accepted unchanged, refused changed. The names `vertical`, `brand`,
 * `chargebackMitigationProvider` and `processorPortalAccess` follow their ids and are ignored. In `currencies` (the
 * whole set), a credential sent back as its mask (`****` + last 4) keeps the stored secret.
 */
export const MerchantAccountUpdateInput = Type.Object(
  {
    rowVersion: int4({ minimum: 1, description: 'The version read; a stale one is 409 and changes nothing' }),
    ...Object.fromEntries(Object.entries(writable).map(([name, schema]) => [name, Type.Optional(withIntegerBounds(schema))])),
    id: Type.Optional(Type.Integer()),
    mid: Type.Optional(Type.String({ maxLength: 64 })),
    companyId: Type.Optional(Type.Integer()),
    company: Type.Optional(Type.String({ maxLength: 200 })),
    gatewayId: Type.Optional(nullableInteger()),
    gateway: Type.Optional(Type.String({ maxLength: 64 })),
    parentCompanyId: Type.Optional(nullableInteger()),
    parentCompany: Type.Optional(nullableText(200)),
    vertical: Type.Optional(nullableText()),
    brand: Type.Optional(nullableText()),
    chargebackMitigationProvider: Type.Optional(nullableText()),
    processorPortalAccess: Type.Optional(nullableText()),
  },
  { additionalProperties: false, description: 'A merchant account (spec 2.6); rowVersion required, omitted fields unchanged' },
);
export type MerchantAccountUpdateInput = Static<typeof MerchantAccountUpdateInput>;
