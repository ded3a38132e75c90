import { describe, expect, it } from 'vitest';
import { mayCascade, statusGroupOf } from '../../domain/payments/cascade-policy.ts';
import { SPEC_STATUS_CODES } from '../support/spec-status-codes.ts';

const allowsAll = { allowRetriesFromOtherMids: true, allowInsufficientFundsRetries: true };
const noRetries = { allowRetriesFromOtherMids: false, allowInsufficientFundsRetries: true };
const noFundsRetries = { allowRetriesFromOtherMids: true, allowInsufficientFundsRetries: false };

/** Declines that say the card is lost or stolen, to be picked up, or the account blacklisted: never retried elsewhere. */
const LOST_STOLEN_OR_BLACKLISTED = [2684, 2690, 2696, 2882, 3631, 3632, 3821, 3822, 3823, 4215, 4220, 4235, 4243, 4244, 4247, 4279];

describe('cascade policy', () => {
  it('retries an issuer decline on another MID when the first MID allows retries', () => {
    expect(mayCascade(3617, allowsAll)).toBe(true);
    expect(mayCascade(3618, allowsAll)).toBe(true);
    expect(mayCascade(4191, noFundsRetries)).toBe(true);
    expect(mayCascade(3617, noRetries)).toBe(false);
  });

  it('retries insufficient funds only when the first MID also allows insufficient-funds retries', () => {
    for (const code of SPEC_STATUS_CODES.filter((c) => c.isInsufficientFunds)) {
      expect(mayCascade(code.id, allowsAll), `${code.id} ${code.status}`).toBe(true);
      expect(mayCascade(code.id, noFundsRetries), `${code.id} ${code.status}`).toBe(false);
      expect(mayCascade(code.id, noRetries), `${code.id} ${code.status}`).toBe(false);
    }
  });

  it('never retries a lost, stolen, pick-up or blacklisted card', () => {
    for (const id of LOST_STOLEN_OR_BLACKLISTED) {
      expect(SPEC_STATUS_CODES.find((c) => c.id === id)?.isIssuerDecline, `${id} is an issuer decline`).toBe(true);
      expect(mayCascade(id, allowsAll), String(id)).toBe(false);
    }
  });

  it('never retries fraud declines, suspected fraud or a stopped recurring program', () => {
    for (const id of [3290, 4197, 4199, 4250, 3635]) expect(mayCascade(id, allowsAll), String(id)).toBe(false);
  });

  it('never retries any decline the interface describes as fraud, lost or stolen, whoever detected it', () => {
    const fraudLostOrStolen = SPEC_STATUS_CODES.filter((c) => /fraud|lost|stolen/i.test(c.status));
    expect(fraudLostOrStolen.map((c) => c.id)).toEqual(expect.arrayContaining([4198, 4255, 4303]));
    for (const code of fraudLostOrStolen) expect(mayCascade(code.id, allowsAll), `${code.id} ${code.status}`).toBe(false);
  });

  it('never retries a success, an invalid card or a system error, whatever the MID allows', () => {
    const notRetried = SPEC_STATUS_CODES.filter((c) => c.successful || c.isInvalidCardDetails || c.isOther);
    expect(notRetried).toHaveLength(6 + 33 + 100);
    for (const code of notRetried) expect(mayCascade(code.id, allowsAll), `${code.id} ${code.status}`).toBe(false);
  });

  it('never retries a code the reference does not know', () => {
    expect(mayCascade(9999, allowsAll)).toBe(false);
    expect(mayCascade(-1, allowsAll)).toBe(false);
  });

  it('names the group of a status code as spec 7.5 does', () => {
    expect(statusGroupOf(2636)).toBe('successful');
    expect(statusGroupOf(3617)).toBe('issuerDecline');
    expect(statusGroupOf(3512)).toBe('insufficientFunds');
    expect(statusGroupOf(3627)).toBe('invalidCardDetails');
    expect(statusGroupOf(0)).toBe('other');
    expect(statusGroupOf(4273)).toBe('other');
    expect(statusGroupOf(9999)).toBeUndefined();
  });
});
