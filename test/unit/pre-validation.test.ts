import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidCardNumber, passesLuhn } from '../../domain/payments/card.ts';
import { shownCardDigits, splitSubAffiliate, validateSubmit } from '../../domain/payments/pre-validation.ts';
import type { SubmitRequest } from '../../domain/payments/submit-request.schema.ts';

const NOW = new Date('2025-06-15T12:00:00Z');
const ALL_NETWORKS = ['NetworkA', 'NetworkB', 'NetworkC', 'NetworkD', 'NetworkE'];

function body(overrides: Partial<SubmitRequest> = {}, card: Partial<NonNullable<SubmitRequest['card']>> = {}): SubmitRequest {
  return {
    email: 'ada@example.com',
    partnerSession: 'ps-1',
    card: { name: 'Ada Lovelace', pan: '4242424242424242', expiryMonth: 12, expiryYear: 2027, cvv: '123', ...card },
    ...overrides,
  };
}

const errorOf = (request: SubmitRequest, networks = ALL_NETWORKS) => {
  const result = validateSubmit(request, networks, NOW);
  return result.ok ? 'ok' : `${result.info}: ${result.error}`;
};

describe('validateSubmit: each pre-processing failure of spec 7.1 alone', () => {
  it.each([
    ['no session at all', body({ partnerSession: undefined }), 'Failed: Either serviceSession or partnerSession is required'],
    ['empty sessions', body({ partnerSession: '', serviceSession: '' }), 'Failed: Either serviceSession or partnerSession is required'],
    ['e-mail missing', body({ email: undefined }), 'Failed: Invalid Email'],
    ['e-mail malformed', body({ email: 'ada@example' }), 'Failed: Invalid Email'],
    ['e-mail blank', body({ email: '   ' }), 'Failed: Invalid Email'],
    ['encrypted card without bin', body({}, { pan: undefined, encrypted: 'jwe', lastFour: '4242' }), 'Failed: Bin and Last4 required along with Encrypted data'],
    ['encrypted card without lastFour', body({}, { pan: undefined, encrypted: 'jwe', bin: '424242' }), 'Failed: Bin and Last4 required along with Encrypted data'],
    ['card number missing', body({}, { pan: undefined }), 'Failed: Invalid CC Number'],
    ['no card at all', body({ card: undefined }), 'Failed: Invalid CC Number'],
    ['card number fails Luhn', body({}, { pan: '4242424242424241' }), 'Failed: Invalid CC Number'],
    ['card number too short', body({}, { pan: '42424242' }), 'Failed: Invalid CC Number'],
    ['bin sent with a plain number not its own', body({}, { bin: '555555' }), 'Failed: Invalid CC Number'],
    ['lastFour sent with a plain number not its own', body({}, { lastFour: '0000' }), 'Failed: Invalid CC Number'],
    ['expiry month zero', body({}, { expiryMonth: 0 }), 'Failed: Invalid expiry'],
    ['expiry year zero', body({}, { expiryYear: 0 }), 'Failed: Invalid expiry'],
    ['expiry month missing', body({}, { expiryMonth: undefined }), 'Failed: Invalid expiry'],
    ['expiry year missing', body({}, { expiryYear: undefined }), 'Failed: Invalid expiry'],
    ['expired last month', body({}, { expiryMonth: 5, expiryYear: 2025 }), 'Failed: Invalid expiry'],
    ['expired last month, 2-digit year', body({}, { expiryMonth: 5, expiryYear: 25 }), 'Failed: Invalid expiry'],
    ['CVV missing', body({}, { cvv: undefined }), 'Failed: Invalid CVV'],
    ['CVV too short', body({}, { cvv: '12' }), 'Failed: Invalid CVV'],
    ['CVV too long for NetworkA', body({}, { cvv: '1234' }), 'Failed: Invalid CVV'],
    ['CVV not digits', body({}, { cvv: '12a' }), 'Failed: Invalid CVV'],
    ['3-digit CVV on NetworkC', body({}, { pan: '378282246310005', cvv: '123' }), 'Failed: Invalid CVV'],
  ])('%s: %s', (_case, request, expected) => {
    expect(errorOf(request)).toBe(expected);
  });

  it('names the network the product does not accept; a number of none of the five is invalid', () => {
    expect(errorOf(body({}, { pan: '5555555555554444' }), ['NetworkA'])).toBe('Failed: NetworkB cards not supported');
    expect(errorOf(body({}, { pan: '378282246310005', cvv: '1234' }), ['NetworkA'])).toBe('Failed: NetworkC cards not supported');
    expect(errorOf(body({}, { pan: '6011000000000004' }), ['NetworkA'])).toBe('Failed: NetworkD cards not supported');
    expect(errorOf(body({}, { pan: '3528000000000007' }), ['NetworkA'])).toBe('Failed: NetworkE cards not supported');
    expect(errorOf(body({}, { pan: '4242424242424242' }), ['NetworkB'])).toBe('Failed: NetworkA cards not supported');
    expect(errorOf(body({}, { pan: '1000000000000008' }))).toBe('Failed: Invalid CC Number');
    expect(errorOf(body({}, { pan: '9999999999999995', expiryMonth: 0 }))).toBe('Failed: Invalid CC Number');
    expect(errorOf(body(), [])).toBe('Failed: NetworkA cards not supported');
  });

  it('accepts either session alone, an expiry this month and a 4-digit CVV on NetworkC', () => {
    expect(errorOf(body({ partnerSession: undefined, serviceSession: 'ss-1' }))).toBe('ok');
    expect(errorOf(body({}, { expiryMonth: 6, expiryYear: 2025 }))).toBe('ok');
    expect(errorOf(body({}, { expiryMonth: 6, expiryYear: 25 }))).toBe('ok');
    expect(errorOf(body({}, { pan: '378282246310005', cvv: '1234' }))).toBe('ok');
    expect(errorOf(body({}, { pan: '4242 4242 4242 4242', bin: '42424242', lastFour: '4242' }))).toBe('ok');
  });
});

describe('validateSubmit: order of precedence', () => {
  it('reports session, e-mail, encryption, number, expiry, CVV, network, one at a time as each is fixed', () => {
    let request: SubmitRequest = {
      card: { encrypted: 'jwe', pan: '4242424242424241', expiryMonth: 13, expiryYear: 2025, cvv: '1' },
      email: 'not-an-email',
    };
    const seen: string[] = [];
    const fixes: ((r: SubmitRequest) => SubmitRequest)[] = [
      (r) => ({ ...r, partnerSession: 'ps-1' }),
      (r) => ({ ...r, email: 'ada@example.com' }),
      (r) => ({ ...r, card: { ...r.card, bin: '555555', lastFour: '4444' } }),
      (r) => ({ ...r, card: { ...r.card, pan: '5555555555554444' } }),
      (r) => ({ ...r, card: { ...r.card, expiryMonth: 12 } }),
      (r) => ({ ...r, card: { ...r.card, cvv: '123' } }),
    ];
    seen.push(errorOf(request, ['NetworkA']));
    for (const fix of fixes) {
      request = fix(request);
      seen.push(errorOf(request, ['NetworkA']));
    }
    expect(seen).toEqual([
      'Failed: Either serviceSession or partnerSession is required',
      'Failed: Invalid Email',
      'Failed: Bin and Last4 required along with Encrypted data',
      'Failed: Invalid CC Number',
      'Failed: Invalid expiry',
      'Failed: Invalid CVV',
      'Failed: NetworkB cards not supported',
    ]);
    expect(errorOf(request, ['NetworkB'])).toBe('ok');
  });

  it('gives the card summary (bin, last4) once the number is valid, and none before', () => {
    const badNumber = validateSubmit(body({}, { pan: '4242424242424241' }), ALL_NETWORKS, NOW);
    expect(badNumber).toEqual({ ok: false, info: 'Failed', error: 'Invalid CC Number', card: undefined });
    const badExpiry = validateSubmit(body({}, { expiryMonth: 0 }), ALL_NETWORKS, NOW);
    expect(badExpiry).toEqual({ ok: false, info: 'Failed', error: 'Invalid expiry', card: { bin: '42424242', last4: '4242' } });
    const badCvv = validateSubmit(body({}, { pan: '5555555555554444', cvv: '' }), ALL_NETWORKS, NOW);
    expect(badCvv).toEqual({ ok: false, info: 'Failed', error: 'Invalid CVV', card: { bin: '55555555', last4: '4444' } });
  });
});

describe('validateSubmit: a valid submit', () => {
  it('normalises the e-mail, the number, the year and the CVV, and derives bin, last4, network and country', () => {
    const result = validateSubmit(
      body({ email: '  Ada.Lovelace@Example.COM ' }, { pan: '4000 0007-6000 0002', expiryMonth: 6, expiryYear: 25, cvv: ' 321 ', name: 'Ada L' }),
      ALL_NETWORKS,
      NOW,
    );
    expect(result).toEqual({
      ok: true,
      email: 'ada.lovelace@example.com',
      card: {
        pan: '4000000760000002',
        cvv: '321',
        expiryMonth: 6,
        expiryYear: 2025,
        holderName: 'Ada L',
        bin: '40000007',
        last4: '0002',
        network: 'NetworkA',
        binCountry: 'BR',
      },
    });
  });

  it('leaves the country unknown for a BIN the gateway does not know', () => {
    const result = validateSubmit(body({}, { pan: '4111111111111111' }), ALL_NETWORKS, NOW);
    expect(result.ok && result.card.binCountry).toBeUndefined();
  });
});

describe('sub-affiliate (spec 2.1: primarysubid_secondarysubid)', () => {
  it.each([
    ['sub1_sub2', { primary: 'sub1', secondary: 'sub2' }],
    ['sub1', { primary: 'sub1' }],
    ['sub1_sub2_sub3', { primary: 'sub1', secondary: 'sub2_sub3' }],
    ['_sub2', { primary: undefined, secondary: 'sub2' }],
    ['sub1_', { primary: 'sub1', secondary: undefined }],
    ['', {}],
    [undefined, {}],
  ])('%j splits into %j', (value, expected) => {
    expect(splitSubAffiliate(value)).toEqual(expected);
  });
});

describe('shownCardDigits: what of a number is shown and stored', () => {
  /** Digits of the number not shown: the Luhn check gives one away, so n hidden digits leave 10^(n-1) numbers. */
  const hiddenDigits = (pan: string, shown: { bin: string; last4: string }) => pan.length - shown.bin.length - shown.last4.length;

  it('shows the first 8 and last 4 of a 16-digit number, the first 6 and last 4 of a shorter one, nothing of an unknown network', () => {
    expect(shownCardDigits('4242424242424242')).toEqual({ bin: '42424242', last4: '4242' });
    expect(shownCardDigits('4000000000000000006')).toEqual({ bin: '40000000', last4: '0006' });
    expect(shownCardDigits('378282246310005')).toEqual({ bin: '378282', last4: '0005' });
    expect(shownCardDigits('4222222222222')).toEqual({ bin: '422222', last4: '2222' });
    expect(shownCardDigits('712345678908')).toBeUndefined();
  });

  it('always hides at least three digits: at least a hundred numbers fit what is shown', () => {
    fc.assert(
      fc.property(fc.constantFrom('4', '51', '2221', '34', '37', '6011', '65', '3528'), fc.constantFrom(13, 15, 16, 19), fc.nat(), (prefix, length, seed) => {
        const body = (prefix + String(seed).padStart(length, '7')).slice(0, length - 1);
        const pan = [...'0123456789'].map((check) => body + check).find(passesLuhn)!;
        const shown = shownCardDigits(pan);
        if (!shown || !isValidCardNumber(pan)) return;
        expect(hiddenDigits(pan, shown)).toBeGreaterThanOrEqual(3);
      }),
    );
  });

  it('a failed submit shows no more than that either', () => {
    const result = validateSubmit(body({}, { pan: '4222222222222', cvv: '1' }), ALL_NETWORKS, NOW);
    expect(result).toMatchObject({ ok: false, error: 'Invalid CVV', card: { bin: '422222', last4: '2222' } });
    const unknown = validateSubmit(body({}, { pan: '712345678908' }), ALL_NETWORKS, NOW);
    expect(unknown).toMatchObject({ ok: false, error: 'Invalid CC Number' });
    expect(unknown.ok === false && unknown.card).toBeUndefined();
  });
});
