import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/** Ends the subscription; a rebill already running completes first, and none follows. */
export const cancelSubscriptionSignal = defineSignal<[{ reason?: string }]>('cancel');
/**
 * Stops billing until resumed; the period due meanwhile is billed on resume. The gateway sends the updates below
 * instead; the signals stay for what was sent before them (and operators' tools).
 */
export const pauseSubscriptionSignal = defineSignal('pause');
export const resumeSubscriptionSignal = defineSignal('resume');

export type BillingAction = 'pause' | 'resume';
/**
 * How billing took a pause or resume, answered in the order it takes them:
 * - `applied`: in effect, recorded and told (or undone since by an action taken after it);
 * - `held`: billing is charging or ending, and takes it once that is over (a cancel may end it first).
 */
export type BillingActionOutcome = 'applied' | 'held';
/** A pause or resume; one update for both, so that Temporal's order of arrival is the order billing takes them in. */
export const billingActionUpdate = defineUpdate<BillingActionOutcome, [BillingAction]>('billingAction');

/** A billing step failing since `since`, tried again after durable sleeps until it succeeds. */
export interface BillingStall {
  readonly step: string;
  readonly reason: string;
  readonly since: string;
}

export interface SubscriptionProgress {
  readonly period: number;
  readonly retries: number;
  readonly paused: boolean;
  readonly cancelRequested: boolean;
  /** Present while a billing step keeps failing. */
  readonly stalled?: BillingStall;
}
export const subscriptionProgressQuery = defineQuery<SubscriptionProgress>('progress');
