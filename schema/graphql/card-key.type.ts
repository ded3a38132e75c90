import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';
import { Min } from 'class-validator';
import { DateTimeResolver, JSONObjectResolver } from 'graphql-scalars';

@ObjectType('CardEncryptionKey', { description: 'Public key a checkout page encrypts cards with (compact JWE, RSA-OAEP-256 + A256GCM)' })
export class CardEncryptionKeyType {
  @Field(() => ID, { description: 'Key id; put it in the JWE header as `kid`' })
  kid!: string;

  @Field(() => JSONObjectResolver, { description: 'The public key as a JWK' })
  jwk!: Record<string, unknown>;

  @Field(() => String)
  algorithm!: string;

  @Field(() => String)
  encryption!: string;

  @Field(() => DateTimeResolver)
  createdAt!: Date;
}

@ArgsType()
export class CardEncryptionKeyArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;
}

