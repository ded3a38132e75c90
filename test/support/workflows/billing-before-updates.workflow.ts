import { condition, setHandler } from '@temporalio/workflow';
import { pauseSubscriptionSignal, resumeSubscriptionSignal } from '../../../workflows/contract/subscription-messages.ts';

/** A subscription's billing as a worker of before the pause and resume updates runs it: it takes their signals only. */
export async function subscriptionWorkflow(): Promise<'paused'> {
  let paused = false;
  setHandler(pauseSubscriptionSignal, () => void (paused = true));
  setHandler(resumeSubscriptionSignal, () => void (paused = false));
  await condition(() => paused);
  return 'paused';
}
