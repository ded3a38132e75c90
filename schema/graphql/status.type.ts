import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import { Max, Min } from 'class-validator';
import { STATUS_PAGE_SIZE } from '../../domain/statuses/status-query.ts';

@ObjectType('StatusCode', { description: 'A transaction status code (spec 2.7)' })
export class StatusCodeType {
  @Field(() => String, { description: 'The code, as a string (spec 2.7)' })
  id!: string;

  @Field(() => String)
  status!: string;

  @Field(() => Boolean)
  successful!: boolean;

  @Field(() => Boolean, { description: 'A status the gateway itself records (e.g. 1789 Submitted)' })
  isGatewayLevelStatus!: boolean;

  @Field(() => Boolean)
  isIssuerDecline!: boolean;

  @Field(() => Boolean)
  isInsufficientFunds!: boolean;

  @Field(() => Boolean)
  isInvalidCardDetails!: boolean;

  @Field(() => Boolean)
  isOther!: boolean;
}

@ObjectType('StatusPage', { description: 'One page of status codes, the same envelope as GET /api/admin/statuses' })
export class StatusPageType {
  @Field(() => Int)
  count!: number;

  @Field(() => Int)
  totalCount!: number;

  @Field(() => Int)
  pageNumber!: number;

  @Field(() => Int)
  pageSize!: number;

  @Field(() => Int)
  totalPages!: number;

  @Field(() => Boolean)
  moreResults!: boolean;

  @Field(() => [StatusCodeType])
  data!: StatusCodeType[];
}

/** Ranges checked here answer BAD_USER_INPUT before the resolver runs; the REST query string has the same limits. */
@ArgsType()
export class StatusesArgs {
  @Field(() => Int, { nullable: true, description: '1-based page number (default 1)' })
  @Min(1)
  pageNumber?: number;

  @Field(() => Int, { nullable: true, description: `Items per page, ${STATUS_PAGE_SIZE.min} to ${STATUS_PAGE_SIZE.max} (default ${STATUS_PAGE_SIZE.default})` })
  @Min(STATUS_PAGE_SIZE.min)
  @Max(STATUS_PAGE_SIZE.max)
  pageSize?: number;

  @Field(() => String, { nullable: true, description: 'Case-insensitive match on the description or the id' })
  search?: string;

  @Field(() => Boolean, { nullable: true })
  successful?: boolean;

  @Field(() => Boolean, { nullable: true })
  isIssuerDecline?: boolean;

  @Field(() => Boolean, { nullable: true })
  isInsufficientFunds?: boolean;

  @Field(() => Boolean, { nullable: true })
  isInvalidCardDetails?: boolean;

  @Field(() => Boolean, { nullable: true })
  isOther?: boolean;
}
