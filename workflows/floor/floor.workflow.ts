import { condition, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { floorAnswerUpdate } from '../contract/floor.ts';

const { floorStep } = proxyLocalActivities<Activities>({ startToCloseTimeout: '10 seconds' });

/**
 * A calibration workflow, not a business process: what a payment would cost if it did nothing but be started,
 * run one local activity and answer its caller. The benchmark compares the submit with it.
 */
export async function floorWorkflow(): Promise<number> {
  let answer: number | undefined;
  setHandler(floorAnswerUpdate, async () => {
    await condition(() => answer !== undefined);
    return answer!;
  });
  answer = await floorStep();
  return answer;
}
