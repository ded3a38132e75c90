import { describe, expect, it } from 'vitest';
import { billingRestartOf } from '../../domain/subscriptions/billing-restart.ts';

describe('starting stopped billing again', () => {
  it("charges the period's first try when none was made (a salvaged checkout's period 0 starts at try 1)", () => {
    expect(billingRestartOf(3, [])).toEqual({ kind: 'restart', retries: 0 });
    expect(billingRestartOf(0, [])).toEqual({ kind: 'restart', retries: 1 });
  });

  it('charges the try after the last declined one', () => {
    expect(billingRestartOf(2, [{ attempt: 1, state: 'declined', orderOpened: true }, { attempt: 0, state: 'declined', orderOpened: true }])).toEqual({ kind: 'restart', retries: 2 });
  });

  it('charges a try prepared but never charged under its own order', () => {
    expect(billingRestartOf(2, [{ attempt: 0, state: 'declined', orderOpened: true }, { attempt: 1, state: 'processing', orderOpened: false }])).toEqual({ kind: 'restart', retries: 1 });
  });

  it('leaves a try whose payment opened its order and recorded no outcome to an operator (it may have charged)', () => {
    expect(billingRestartOf(4, [{ attempt: 0, state: 'processing', orderOpened: true }])).toEqual({ kind: 'operator', reason: 'the charge of period 4, try 0, has no recorded outcome' });
  });
});
