import { ArgsType, Field, Float, Int, ObjectType } from 'type-graphql';
import { ArrayMaxSize, ArrayMinSize, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { DateTimeResolver, UUIDResolver } from 'graphql-scalars';
import { MITIGATION_LIMITS } from '../../domain/mitigation/search.ts';

export const MITIGATION_GRAPHQL_PAGE = { default: 50, max: 200 } as const;

@ObjectType('MitigationOrder', { description: 'The order a transaction belongs to' })
export class MitigationOrderType {
  @Field(() => Int) id!: number;
  @Field(() => String, { description: 'submit or subscription' }) kind!: string;
  @Field(() => String) state!: string;
  @Field(() => Float) amount!: number;
  @Field(() => String) currency!: string;
  @Field(() => Int, { nullable: true }) campaignId!: number | null;
  @Field(() => Int) productId!: number;
  @Field(() => DateTimeResolver) createdAt!: Date;
}

@ObjectType('MitigationCustomer')
export class MitigationCustomerType {
  @Field(() => Int) id!: number;
  @Field(() => String) email!: string;
  @Field(() => String, { nullable: true }) firstName!: string | null;
  @Field(() => String, { nullable: true }) lastName!: string | null;
  @Field(() => String, { nullable: true }) phone!: string | null;
}

@ObjectType('MitigationSubscription', { description: 'The subscription the transaction paid for or created' })
export class MitigationSubscriptionType {
  @Field(() => Int) id!: number;
  @Field(() => String) state!: string;
  @Field(() => String) email!: string;
  @Field(() => Float) recurringAmount!: number;
  @Field(() => DateTimeResolver) nextBillingAt!: Date;
  @Field(() => DateTimeResolver) createdAt!: Date;
}

@ObjectType('MitigationTransaction', { description: 'A transaction as the mitigation search finds it (spec 2.8), with its related records' })
export class MitigationTransactionType {
  @Field(() => String) gateway!: string;
  @Field(() => UUIDResolver) transactionId!: string;
  @Field(() => Int) orderId!: number;
  @Field(() => DateTimeResolver, { description: 'Authorization time' }) sent!: string;
  @Field(() => String) email!: string;
  @Field(() => Boolean) sandbox!: boolean;
  @Field(() => Int) applicationId!: number;
  @Field(() => String) status!: string;
  @Field(() => Int) statusId!: number;
  @Field(() => Boolean) success!: boolean;
  @Field(() => DateTimeResolver, { nullable: true }) completed!: string | null;
  @Field(() => String) currency!: string;
  @Field(() => Float) amount!: number;
  @Field(() => String, { nullable: true }) mid!: string | null;
  @Field(() => String, { nullable: true }) descriptor!: string | null;
  @Field(() => Int) customerId!: number;
  @Field(() => String, { nullable: true }) authCode!: string | null;
  @Field(() => String, { nullable: true }) gatewayTransactionId!: string | null;
  @Field(() => String, { nullable: true }) firstName!: string | null;
  @Field(() => String, { nullable: true }) lastName!: string | null;
  @Field(() => String) bin!: string;
  @Field(() => String) last4!: string;
  @Field(() => Boolean) refunded!: boolean;
  @Field(() => Boolean) refundable!: boolean;
  @Field(() => Boolean) hasAlert!: boolean;
  @Field(() => Boolean) chargedBack!: boolean;
  @Field(() => UUIDResolver, { nullable: true }) originalTransactionId!: string | null;
  /** For the related-record resolvers; not exposed. */
  productId!: number;
  merchantAccountId!: number | null;
}

@ObjectType('MitigationTransactionEdge')
export class MitigationTransactionEdgeType {
  @Field(() => String, { description: 'Pass as `after` to read on from this transaction' }) cursor!: string;
  @Field(() => MitigationTransactionType) node!: MitigationTransactionType;
}

@ObjectType('MitigationPageInfo')
export class MitigationPageInfoType {
  @Field(() => Boolean) hasNextPage!: boolean;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
}

@ObjectType('MitigationTransactionConnection', { description: 'Newest authorization first, ties by transaction id' })
export class MitigationTransactionConnectionType {
  @Field(() => [MitigationTransactionEdgeType]) edges!: MitigationTransactionEdgeType[];
  @Field(() => MitigationPageInfoType) pageInfo!: MitigationPageInfoType;
}

const MAX_VALUES = MITIGATION_LIMITS.maxValuesPerFilter;
/** class-validator's own words are "must contain at least 1 elements". */
const AT_LEAST_ONE = { message: '$property must hold at least one value' };

/** The filters of POST /api/mitigation/transactions (spec 4.10), with a cursor instead of page numbers. */
@ArgsType()
export class MitigationTransactionsArgs {
  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;

  @Field(() => Int, { nullable: true, description: `Transactions per page, 1 to ${MITIGATION_GRAPHQL_PAGE.max} (default ${MITIGATION_GRAPHQL_PAGE.default})` })
  @Min(1)
  @Max(MITIGATION_GRAPHQL_PAGE.max)
  first?: number;

  @Field(() => String, { nullable: true, description: 'The endCursor of the previous page' })
  @MaxLength(200)
  after?: string;

  @Field(() => [String], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @MaxLength(320, { each: true }) emails?: string[];
  @Field(() => [Int], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @Min(1, { each: true }) orderIds?: number[];
  @Field(() => [String], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @IsUUID('all', { each: true }) transactionIds?: string[];
  @Field(() => [String], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @MaxLength(100, { each: true }) gatewayTransactionIds?: string[];
  @Field(() => String, { nullable: true, description: 'First 6 digits of the card' }) @Matches(/^\d{6}$/) bin?: string;
  @Field(() => String, { nullable: true }) @Matches(/^\d{4}$/) last4?: string;
  @Field(() => String, { nullable: true }) @MaxLength(100) firstName?: string;
  @Field(() => String, { nullable: true }) @MaxLength(100) lastName?: string;
  @Field(() => [String], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @MaxLength(20, { each: true }) authCodes?: string[];
  @Field(() => String, { nullable: true }) @Matches(/^[A-Za-z]{3}$/) currency?: string;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD, UTC, inclusive' }) @Matches(/^\d{4}-\d{2}-\d{2}$/) dateFrom?: string;
  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD, UTC, inclusive' }) @Matches(/^\d{4}-\d{2}-\d{2}$/) dateTo?: string;
  @Field(() => String, { nullable: true }) @MaxLength(255) descriptorContains?: string;
  @Field(() => Boolean, { nullable: true }) sandbox?: boolean;
  @Field(() => [Int], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @Min(1, { each: true }) applicationIds?: number[];
  @Field(() => [Int], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @Min(1, { each: true }) productIds?: number[];
  @Field(() => [Int], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @Min(1, { each: true }) campaignIds?: number[];
  @Field(() => [Int], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @Min(1, { each: true }) merchantAccountIds?: number[];
  @Field(() => [Int], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @Min(1, { each: true }) companyIds?: number[];
  @Field(() => [Int], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @Min(1, { each: true }) subscriptionIds?: number[];
  @Field(() => [Float], { nullable: true }) @ArrayMinSize(1, AT_LEAST_ONE) @ArrayMaxSize(MAX_VALUES) @Min(0, { each: true }) amounts?: number[];
  @Field(() => Boolean, { nullable: true }) includeUpdated?: boolean;
}
