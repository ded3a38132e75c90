import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uncertainChargeVerdict, type AttemptAtProcessor } from '../../domain/subscriptions/uncertain-charge.ts';

const recordedApproval: AttemptAtProcessor = { kind: 'approved', recorded: true };
const unrecordedApproval: AttemptAtProcessor = { kind: 'approved', recorded: false };
const notCharged: AttemptAtProcessor = { kind: 'not_charged' };
const unanswered: AttemptAtProcessor = { kind: 'unanswered', reason: 'the processor answered HTTP 401' };
const anyAttempt = fc.constantFrom(recordedApproval, unrecordedApproval, notCharged, unanswered);

describe('what billing does with an uncertain rebill, from what the processor says of its attempts', () => {
  it('pays the period with an approval this gateway recorded, whatever the other attempts say', () => {
    expect(uncertainChargeVerdict([notCharged, recordedApproval])).toEqual({ kind: 'charged' });
    fc.assert(fc.property(fc.array(anyAttempt), fc.array(anyAttempt), (before, after) => uncertainChargeVerdict([...before, recordedApproval, ...after]).kind === 'charged'));
  });

  it('charges anew only when every attempt is known to have charged nothing', () => {
    expect(uncertainChargeVerdict([notCharged, notCharged])).toEqual({ kind: 'not_charged' });
    // An order never opened has no attempt: nothing was sent.
    expect(uncertainChargeVerdict([])).toEqual({ kind: 'not_charged' });
    fc.assert(fc.property(fc.array(anyAttempt), (attempts) => (uncertainChargeVerdict(attempts).kind === 'not_charged') === attempts.every((a) => a.kind === 'not_charged')));
  });

  it('stays unknown with an attempt the processor would not answer for, or an approval no transaction records', () => {
    expect(uncertainChargeVerdict([notCharged, unanswered])).toEqual({ kind: 'unknown', reason: 'the processor answered HTTP 401' });
    expect(uncertainChargeVerdict([unrecordedApproval, notCharged])).toEqual({ kind: 'unknown', reason: 'the processor holds an approval this gateway never recorded' });
  });
});
