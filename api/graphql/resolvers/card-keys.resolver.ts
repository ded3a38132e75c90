import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { CARD_JWE_ALGORITHM, CARD_JWE_ENCRYPTION } from '../../../domain/payments/card-encryption.ts';
import { activeCardKey, rotateCardKey } from '../../../services/payments/card-keys.ts';
import type { CardEncryptionKey } from '../../../schema/entities/index.ts';
import { CardEncryptionKeyArgs, CardEncryptionKeyType } from '../../../schema/graphql/card-key.type.ts';
import { actorOf, requireTenant, type GraphQLContext } from '../context.ts';

const toType = (key: CardEncryptionKey): CardEncryptionKeyType => ({
  kid: key.id,
  jwk: key.publicJwk,
  algorithm: CARD_JWE_ALGORITHM,
  encryption: CARD_JWE_ENCRYPTION,
  createdAt: key.createdAt,
});

@Resolver()
export class CardKeysResolver {
  @Query(() => CardEncryptionKeyType, { nullable: true, description: "The tenant's active card-encryption public key; null until one is issued" })
  async cardEncryptionKey(@Args(() => CardEncryptionKeyArgs) args: CardEncryptionKeyArgs, @Ctx() context: GraphQLContext): Promise<CardEncryptionKeyType | null> {
    const key = await activeCardKey(context.em, requireTenant(context, args.tenantId));
    return key ? toType(key) : null;
  }

  @Mutation(() => CardEncryptionKeyType, { description: 'Issues a new card-encryption key pair and makes it active; earlier keys still decrypt. At most one a minute per tenant: sooner is refused with RATE_LIMITED and retryAfterSeconds' })
  async rotateCardEncryptionKey(@Args(() => CardEncryptionKeyArgs) args: CardEncryptionKeyArgs, @Ctx() context: GraphQLContext): Promise<CardEncryptionKeyType> {
    return toType(await rotateCardKey(context.em, context.services.secretBox, requireTenant(context, args.tenantId), actorOf(context)));
  }
}
