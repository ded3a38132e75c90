import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import { ArrayMaxSize, IsIn, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { DateTimeResolver, UUIDResolver } from 'graphql-scalars';
import { EMAIL_EVENT_KINDS, EMAIL_STATUSES } from '../../domain/email/email-status.ts';
import { EMAIL_PAGE_SIZE } from '../../domain/email/email-query.ts';

@ObjectType('EmailEvent', { description: 'One entry of an e-mail\'s history' })
export class EmailEventType {
  @Field(() => String, { description: `${EMAIL_EVENT_KINDS.join(', ')}` })
  kind!: string;

  @Field(() => String, { nullable: true, description: 'sent: the SMTP Message-ID; deferred and failed: what the SMTP server (or the renderer) said' })
  detail!: string | null;

  @Field(() => DateTimeResolver)
  occurredAt!: Date;
}

@ObjectType('Email', { description: 'An e-mail accepted by POST /api/email or /api/email/batch, with its delivery status and history' })
export class EmailType {
  @Field(() => UUIDResolver)
  id!: string;

  @Field(() => UUIDResolver, { nullable: true, description: 'The batch it was sent in (the batch request\'s delivery id)' })
  batchId!: string | null;

  @Field(() => Int, { nullable: true, description: 'Its position in the batch, from 0' })
  batchIndex!: number | null;

  @Field(() => String)
  from!: string;

  @Field(() => [String])
  to!: string[];

  @Field(() => [String])
  cc!: string[];

  @Field(() => [String])
  bcc!: string[];

  @Field(() => String, { nullable: true })
  replyTo!: string | null;

  @Field(() => String)
  subject!: string;

  @Field(() => String, { description: 'react or string' })
  templateType!: string;

  @Field(() => String, { nullable: true })
  templateName!: string | null;

  @Field(() => String, { description: `${EMAIL_STATUSES.join(', ')}` })
  status!: string;

  @Field(() => Int, { description: 'SMTP attempts made' })
  attemptCount!: number;

  @Field(() => String, { nullable: true, description: 'Message-ID of the sent message' })
  smtpMessageId!: string | null;

  @Field(() => String, { nullable: true, description: "The SMTP server's answer when it accepted the message" })
  smtpResponse!: string | null;

  @Field(() => String, { nullable: true, description: 'Why it failed (or was last deferred)' })
  failureReason!: string | null;

  @Field(() => [EmailEventType], { description: 'Oldest first' })
  events!: EmailEventType[];

  @Field(() => DateTimeResolver)
  createdAt!: Date;

  @Field(() => DateTimeResolver)
  updatedAt!: Date;

  @Field(() => DateTimeResolver, { nullable: true, description: 'When it was sent or failed' })
  completedAt!: Date | null;
}

@ObjectType('EmailEdge')
export class EmailEdgeType {
  @Field(() => String, { description: 'Pass as `after` to read on from this e-mail' })
  cursor!: string;

  @Field(() => EmailType)
  node!: EmailType;
}

@ObjectType('EmailPageInfo')
export class EmailPageInfoType {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

@ObjectType('EmailConnection', { description: 'E-mails newest first' })
export class EmailConnectionType {
  @Field(() => [EmailEdgeType])
  edges!: EmailEdgeType[];

  @Field(() => EmailPageInfoType)
  pageInfo!: EmailPageInfoType;
}

@ArgsType()
export class EmailArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;

  @Field(() => UUIDResolver)
  @IsUUID()
  id!: string;
}

@ArgsType()
export class EmailsArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;

  @Field(() => Int, { nullable: true, description: `E-mails per page, 1 to ${EMAIL_PAGE_SIZE.max} (default ${EMAIL_PAGE_SIZE.default})` })
  @Min(1)
  @Max(EMAIL_PAGE_SIZE.max)
  first?: number;

  @Field(() => String, { nullable: true, description: 'The `endCursor` of the previous page' })
  @MaxLength(200)
  after?: string;

  @Field(() => String, { nullable: true, description: `${EMAIL_STATUSES.join(', ')}` })
  @IsIn([...EMAIL_STATUSES])
  status?: string;

  @Field(() => UUIDResolver, { nullable: true, description: 'Only the e-mails of this batch' })
  @IsUUID()
  batchId?: string;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Accepted at or after (years 1970 to 9998, UTC)' })
  createdAfter?: Date;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Accepted before (years 1970 to 9998, UTC)' })
  createdBefore?: Date;
}

@ArgsType()
export class SetEmailSenderDomainsArgs {
  @Field(() => Int)
  @Min(1)
  tenantId!: number;

  @Field(() => [String], { description: 'Every domain the tenant may send from (replaces the current list); e.g. shop.example' })
  @ArrayMaxSize(100)
  @MaxLength(253, { each: true })
  domains!: string[];
}

@ObjectType('EmailSenderDomains', { description: 'The domains a tenant may send e-mail from, and its e-mail tenant key' })
export class EmailSenderDomainsType {
  @Field(() => Int)
  tenantId!: number;

  @Field(() => UUIDResolver, { description: 'The `tenant_key` of POST /api/email' })
  tenantKey!: string;

  @Field(() => [String])
  domains!: string[];
}

