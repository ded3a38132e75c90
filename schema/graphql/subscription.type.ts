import { ArgsType, Field, Int, ObjectType } from 'type-graphql';
import { Max, Min } from 'class-validator';
import { DateTimeResolver } from 'graphql-scalars';

@ObjectType('Subscription', { description: 'A subscription created by a submit on a plan product, and where its recurring billing stands' })
export class SubscriptionType {
  @Field(() => Int)
  id!: number;

  @Field(() => Int)
  productId!: number;

  @Field(() => String)
  email!: string;

  @Field(() => String, { description: '`pending`, `active`, `grace` (a declined rebill waits for its dunning retry) or `cancelled`' })
  state!: string;

  @Field(() => Boolean)
  paused!: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'Why the gateway paused billing: `charge_uncertain` (a failed rebill may have charged the card: a resume asks the processor about its order first, and the period is charged anew only if it charged nothing; or cancel); null when not paused or paused on request',
  })
  pauseReason!: string | null;

  @Field(() => String, { description: 'Recurring amount, decimal string in `currency`' })
  recurringAmount!: string;

  @Field(() => String)
  currency!: string;

  @Field(() => Int, { description: 'Periods paid after the first payment' })
  billedPeriods!: number;

  @Field(() => DateTimeResolver, { description: 'The next charge or dunning retry; once cancelled, when it would have been (nothing is charged after a cancel: read state)' })
  nextBillingAt!: Date;

  @Field(() => DateTimeResolver, { nullable: true, description: 'While `grace`: when the declined rebill is retried; null otherwise' })
  graceUntil!: Date | null;

  @Field(() => DateTimeResolver, { nullable: true })
  cancelledAt!: Date | null;

  @Field(() => String, { nullable: true, description: '`cancelled_by_merchant`, `hard_decline`, `retries_exhausted`, `no_card_on_file` (no card was kept for rebills) or `blocked` (its card or e-mail was blocklisted after the checkout)' })
  cancelReason!: string | null;

  @Field(() => DateTimeResolver)
  createdAt!: Date;

  @Field(() => String, {
    nullable: true,
    description:
      "In a cancel's, pause's or resume's answer: that action (`cancel`, `pause`, `resume`), accepted but not in effect yet because a rebill is in flight; it takes effect when that charge ends. Null when in effect, and in every read",
  })
  pendingAction!: string | null;
}

@ArgsType()
export class SubscriptionArgs {
  @Field(() => Int, { description: 'Subscription id (`subscriptionId` of the submit result)' })
  @Min(1)
  @Max(2_147_483_647)
  id!: number;

  @Field(() => Int, { nullable: true, description: 'Operator only: which tenant' })
  @Min(1)
  tenantId?: number;
}
