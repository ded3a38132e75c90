import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType('ProvisionedApiKey', { description: 'A key created by this run; the value is shown once and never again' })
export class ProvisionedApiKeyType {
  @Field(() => String)
  name!: string;

  @Field(() => Int)
  id!: number;

  @Field(() => String, { description: 'created, updated or unchanged' })
  change!: string;

  @Field(() => String, { nullable: true })
  key?: string;
}

@ObjectType('ProvisionedRecord')
export class ProvisionedRecordType {
  @Field(() => String, { description: 'The fixture key (slug or MID)' })
  key!: string;

  @Field(() => ID)
  id!: string;

  @Field(() => String)
  change!: string;

  @Field(() => String, { nullable: true, description: 'A webhook secret created by this run' })
  secret?: string;
}

@ObjectType('ProvisionedLeadKeys')
export class ProvisionedLeadKeysType {
  @Field(() => String)
  change!: string;

  @Field(() => String, { nullable: true })
  publishableKey?: string;

  @Field(() => String, { nullable: true })
  secretKey?: string;
}

@ObjectType('TenantProvisioning', { description: 'What provisioning did for one tenant' })
export class TenantProvisioningType {
  @Field(() => String)
  slug!: string;

  @Field(() => Int)
  id!: number;

  @Field(() => String)
  clientId!: string;

  @Field(() => String)
  change!: string;

  @Field(() => String)
  emailTenantKey!: string;

  @Field(() => [ProvisionedApiKeyType])
  apiKeys!: ProvisionedApiKeyType[];

  @Field(() => [ProvisionedRecordType])
  products!: ProvisionedRecordType[];

  @Field(() => [ProvisionedRecordType])
  merchantAccounts!: ProvisionedRecordType[];

  @Field(() => ProvisionedLeadKeysType, { nullable: true })
  leadKeys?: ProvisionedLeadKeysType;

  @Field(() => [ProvisionedRecordType])
  webhookEndpoints!: ProvisionedRecordType[];
}
