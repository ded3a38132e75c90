import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';
import { IsIn, Max, Min } from 'class-validator';
import { DateTimeResolver, JSONObjectResolver, JSONResolver, UUIDResolver } from 'graphql-scalars';
import { LEAD_STATUSES } from '../../domain/leads/lead.ts';
import { LEAD_ENVIRONMENTS } from '../../domain/leads/lead-keys.ts';
import { LEAD_PAGE_SIZE } from '../../domain/leads/lead-query.ts';

@ObjectType('CustomerLead', { description: 'A checkout journey (spec 2.4); the same record as GET /api/public/customer-leads' })
export class CustomerLeadType {
  @Field(() => UUIDResolver)
  id!: string;

  @Field(() => String)
  sessionId!: string;

  @Field(() => String)
  email!: string;

  @Field(() => String, { nullable: true })
  firstName!: string | null;

  @Field(() => String, { nullable: true })
  lastName!: string | null;

  @Field(() => String, { nullable: true })
  phone!: string | null;

  @Field(() => JSONResolver, { description: 'Visited pages: objects with `page`' })
  scans!: unknown[];

  @Field(() => JSONObjectResolver, { nullable: true, description: 'Decoded `pending_data_b64`' })
  pendingData!: Record<string, unknown> | null;

  @Field(() => JSONObjectResolver, { description: 'Every `cfa_*` and `d2d_*` field by name; `cfa_device` always (null until written)' })
  trackingFields!: Record<string, string | null>;

  @Field(() => String, { description: 'lead or paid' })
  status!: string;

  @Field(() => Int)
  applicationId!: number;

  @Field(() => String, { description: 'test or live: the environment of the key that wrote it' })
  environment!: string;

  @Field(() => String, { nullable: true, description: 'Of the payment that first made the lead paid' })
  transactionId!: string | null;

  @Field(() => Int, { nullable: true })
  orderId!: number | null;

  @Field(() => String, { nullable: true, description: 'Exact decimal' })
  amount!: string | null;

  @Field(() => String, { nullable: true })
  currency!: string | null;

  @Field(() => Int, { nullable: true })
  subscriptionId!: number | null;

  @Field(() => DateTimeResolver, { nullable: true })
  paidAt!: Date | null;

  @Field(() => DateTimeResolver)
  createdAt!: Date;

  @Field(() => DateTimeResolver)
  updatedAt!: Date;
}

@ObjectType('CustomerLeadEdge')
export class CustomerLeadEdgeType {
  @Field(() => String, { description: 'Pass as `after` to read on from this lead' })
  cursor!: string;

  @Field(() => CustomerLeadType)
  node!: CustomerLeadType;
}

@ObjectType('CustomerLeadPageInfo')
export class CustomerLeadPageInfoType {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

@ObjectType('CustomerLeadConnection', { description: 'Leads most recently updated first' })
export class CustomerLeadConnectionType {
  @Field(() => [CustomerLeadEdgeType])
  edges!: CustomerLeadEdgeType[];

  @Field(() => CustomerLeadPageInfoType)
  pageInfo!: CustomerLeadPageInfoType;
}

@ArgsType()
export class CustomerLeadsArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;

  @Field(() => Int, { nullable: true, description: `Leads per page, 1 to ${LEAD_PAGE_SIZE.max} (default ${LEAD_PAGE_SIZE.default})` })
  @Min(1)
  @Max(LEAD_PAGE_SIZE.max)
  first?: number;

  @Field(() => String, { nullable: true, description: 'The `endCursor` of the previous page' })
  after?: string;

  @Field(() => ID, { nullable: true })
  id?: string;

  @Field(() => String, { nullable: true })
  email?: string;

  @Field(() => String, { nullable: true })
  sessionId?: string;

  @Field(() => String, { nullable: true })
  transactionId?: string;

  @Field(() => Int, { nullable: true })
  subscriptionId?: number;

  @Field(() => String, { nullable: true, description: 'lead or paid' })
  @IsIn([...LEAD_STATUSES])
  status?: string;
}

@ObjectType('GeneratedLeadKeys', { description: 'A new lead key pair; shown once, never readable again' })
export class GeneratedLeadKeysType {
  @Field(() => Int)
  applicationId!: number;

  @Field(() => String)
  environment!: string;

  @Field(() => String, { description: 'For browsers (X-Service-Lead-Key)' })
  publishableKey!: string;

  @Field(() => String, { description: 'For servers (Authorization: Bearer); never put it in browser code' })
  secretKey!: string;
}

@ObjectType('LeadApplication', { description: 'A storefront of a tenant and the origins that may write its leads' })
export class LeadApplicationType {
  @Field(() => Int)
  id!: number;

  @Field(() => String)
  slug!: string;

  @Field(() => String)
  name!: string;

  @Field(() => [String])
  allowedOrigins!: string[];
}

@ArgsType()
export class GenerateLeadKeysArgs {
  @Field(() => Int)
  @Min(1)
  tenantId!: number;

  @Field(() => String, { description: 'Slug of the application' })
  application!: string;

  @Field(() => String, { description: 'test or live' })
  @IsIn([...LEAD_ENVIRONMENTS])
  environment!: string;
}

@ArgsType()
export class SetLeadAllowedOriginsArgs {
  @Field(() => Int)
  @Min(1)
  tenantId!: number;

  @Field(() => String, { description: 'Slug of the application' })
  application!: string;

  @Field(() => [String], { description: 'Exactly as browsers send Origin: scheme://host[:port]' })
  origins!: string[];
}
