import { describe, expect, it } from 'vitest';
import { DEFAULT_DUNNING, firstChargeWaitSeconds, nextDunningStep, notProcessedRetrySeconds, rebillNotProcessed } from '../../domain/subscriptions/dunning.ts';

describe('dunning', () => {
  it('tells a rebill the gateway could not process from a decline', () => {
    expect(rebillNotProcessed({ chargeSuccess: false, statusId: 0, info: 'None' })).toBe(true); // no merchant account with room
    expect(rebillNotProcessed({ chargeSuccess: false, statusId: 0, info: 'Error' })).toBe(true); // a step failed for good
    expect(rebillNotProcessed({ chargeSuccess: false, statusId: 3512, info: 'Error' })).toBe(false); // insufficient funds
    expect(rebillNotProcessed({ chargeSuccess: false, statusId: 0, info: 'Failed' })).toBe(false); // the card itself refused before processing
    expect(rebillNotProcessed({ chargeSuccess: true, statusId: 2636, info: 'Success' })).toBe(false);
  });

  it("waits the plan's other delays for it, repeating the last, a day when the plan names none", () => {
    const plan = { dunning: { insufficientFundsRetrySeconds: [5], otherRetrySeconds: [60, 600] } };
    expect([0, 1, 2, 9].map((count) => notProcessedRetrySeconds(plan, count))).toEqual([60, 600, 600, 600]);
    expect(notProcessedRetrySeconds({ dunning: { insufficientFundsRetrySeconds: [], otherRetrySeconds: [] } }, 0)).toBe(86_400);
    expect(notProcessedRetrySeconds({}, 5)).toBe(DEFAULT_DUNNING.otherRetrySeconds.at(-1));
  });

  it('stops at a hard decline and after the schedule of soft ones', () => {
    const plan = { dunning: { insufficientFundsRetrySeconds: [1, 2], otherRetrySeconds: [3] } };
    expect(nextDunningStep(3635, 0, plan)).toEqual({ kind: 'stop', reason: 'hard_decline' });
    expect([0, 1, 2].map((retries) => nextDunningStep(3512, retries, plan))).toEqual([
      { kind: 'retry', afterSeconds: 1 },
      { kind: 'retry', afterSeconds: 2 },
      { kind: 'stop', reason: 'retries_exhausted' },
    ]);
  });

  it('stops at once when the cardholder stopped the program or a blocklist refuses the card, whatever its group', () => {
    const plan = { dunning: { insufficientFundsRetrySeconds: [1], otherRetrySeconds: [3] } };
    for (const statusId of [3636, 1614, 4115, 4116, 3808]) expect(nextDunningStep(statusId, 0, plan), String(statusId)).toEqual({ kind: 'stop', reason: 'hard_decline' });
    // An ordinary decline of that group is still retried.
    expect(nextDunningStep(4273, 0, plan)).toEqual({ kind: 'retry', afterSeconds: 3 });
  });

  it('retries an issuer or network briefly away and a limit that resets, rather than end the subscription', () => {
    const plan = { dunning: { insufficientFundsRetrySeconds: [1], otherRetrySeconds: [3] } };
    for (const statusId of [4234, 4186, 4182, 4229, 4194, 4195, 4228, 4246]) expect(nextDunningStep(statusId, 0, plan), String(statusId)).toEqual({ kind: 'retry', afterSeconds: 3 });
    // A lost card and "do not honor" stay hard.
    expect(nextDunningStep(3631, 0, plan)).toEqual({ kind: 'stop', reason: 'hard_decline' });
    expect(nextDunningStep(3618, 0, plan)).toEqual({ kind: 'stop', reason: 'hard_decline' });
  });

  it("charges a new subscription first after its trial and period, or a salvaged checkout at the decline's first retry", () => {
    const plan = { recurringAmount: '4.99', intervalDays: 30, trialDays: 7, gracePeriodDays: 5 };
    expect(firstChargeWaitSeconds(plan)).toBe(37 * 86_400);
    expect(firstChargeWaitSeconds({ ...plan, intervalSeconds: 2, trialSeconds: 3 })).toBe(5);
    expect(firstChargeWaitSeconds(plan, 3512)).toBe(DEFAULT_DUNNING.insufficientFundsRetrySeconds[0]);
    expect(firstChargeWaitSeconds({ ...plan, dunning: { insufficientFundsRetrySeconds: [60] } }, 3512)).toBe(60);
    // A schedule with no retry: the grace period's end.
    expect(firstChargeWaitSeconds({ ...plan, dunning: { insufficientFundsRetrySeconds: [] } }, 3512)).toBe(5 * 86_400);
  });
});
