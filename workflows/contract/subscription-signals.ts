import { defineQuery, defineSignal } from '@temporalio/workflow';

/** Ends the subscription; a rebill already running completes first, and none follows. */
export const cancelSubscriptionSignal = defineSignal<[{ reason?: string }]>('cancel');
/** Stops billing until resumed; the period due meanwhile is billed on resume. */
export const pauseSubscriptionSignal = defineSignal('pause');
export const resumeSubscriptionSignal = defineSignal('resume');

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
