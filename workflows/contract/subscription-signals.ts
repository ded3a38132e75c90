import { defineQuery, defineSignal } from '@temporalio/workflow';

/** Ends the subscription; a rebill already running completes first, and none follows. */
export const cancelSubscriptionSignal = defineSignal<[{ reason?: string }]>('cancel');
/** Stops billing until resumed; the period due meanwhile is billed on resume. */
export const pauseSubscriptionSignal = defineSignal('pause');
export const resumeSubscriptionSignal = defineSignal('resume');

export interface SubscriptionProgress {
  readonly period: number;
  readonly retries: number;
  readonly paused: boolean;
  readonly cancelRequested: boolean;
}
export const subscriptionProgressQuery = defineQuery<SubscriptionProgress>('progress');
