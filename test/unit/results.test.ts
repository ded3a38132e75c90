import { describe, expect, it } from 'vitest';
import { buildProcessedResult, noMerchantAccountResult, pendingResult, type AccountView, type AttemptView } from '../../domain/payments/processed-result.ts';
import { SUBMIT_INFOS, emptyResult, preProcessingResult, type ResultContext } from '../../domain/payments/submit-result.ts';

/** The 28 fields of spec 2.3. */
const SPEC_FIELDS = [
  'serviceSession', 'partnerSession', 'subscribeSuccess', 'chargeSuccess', 'info', 'error', 'email', 'message', 'orderId', 'descriptor', 'mid',
  'threeDSecureId', 'transactionId', 'amount', 'statusId', 'declineSalvage', 'merchantAccountId', 'midPortalUrl', 'bin', 'binCountry', 'last4',
  'eci', 'networkTokenized', 'submitOrderId', 'mobileWalletA', 'mobileWalletB', 'gatewayResponses', 'subscriptionId',
];

const context: ResultContext = { partnerSession: 'ps-1', email: 'ada@example.com', amount: '19.99', bin: '42424242', binCountry: 'US', last4: '4242' };
const payment = { submitOrderId: 501, resultContext: context };
const account: AccountView = { merchantAccountId: 7, mid: 'MID-7', descriptor: 'SHOP*7', midPortalUrl: 'https://portal.example/7' };

const exchange = (httpStatus: number, response: string) => ({ gateway: 'sandbox', httpStatus, response });
const approved = (eci?: string): AttemptView => ({
  outcome: { kind: 'approved', statusId: 2636, processorTransactionId: 'sbx_ok', authCode: 'A1B2C3', eci },
  exchange: exchange(200, '{"status":"approved"}'),
});
const declined = (statusId: number, processorTransactionId?: string): AttemptView => ({
  outcome: { kind: 'declined', statusId, processorTransactionId },
  exchange: exchange(200, '{"status":"declined"}'),
});
const unknown: AttemptView = { outcome: { kind: 'unknown', reason: 'timeout' }, exchange: exchange(0, 'no answer within 1000 ms (timeout)') };
const noSubscription = { orderId: 501, subscriptionId: 0 };

describe('result skeletons', () => {
  it('lists the nine info values of spec 2.3', () => {
    expect([...SUBMIT_INFOS]).toEqual(['Success', 'Error', 'Failed', 'LimitReached', 'UserBlocked', 'None', 'AlreadySubscribed', 'Pending', 'RedirectRequired']);
  });

  it('an empty result has every field of spec 2.3, carrying the request context and the amount as a number', () => {
    const result = emptyResult(context);
    expect(Object.keys(result).sort()).toEqual([...SPEC_FIELDS].sort());
    expect(result).toMatchObject({ partnerSession: 'ps-1', serviceSession: '', email: 'ada@example.com', amount: 19.99, bin: '42424242', last4: '4242', statusId: 0, info: 'None', gatewayResponses: [] });
    expect(emptyResult({ amount: '0.10' }).amount).toBe(0.1);
    expect(emptyResult({ amount: '1000.00' }).amount).toBe(1000);
  });

  it.each([
    ['Failed', 'Invalid CVV'],
    ['LimitReached', 'CC entered too many times in quick succession'],
    ['UserBlocked', 'Blocked card'],
  ] as const)('a pre-processing %s mirrors the error in message, with statusId 0 and no order', (info, error) => {
    expect(preProcessingResult(context, info, error)).toEqual({ ...emptyResult(context), info, error, message: error, statusId: 0, submitOrderId: 0, orderId: 0 });
  });
});

describe('processed results (spec 3.1)', () => {
  it('an approval is Success with the MID, the processor id, the ECI and every exchange', () => {
    const result = buildProcessedResult(payment, account, [declined(3617, 'sbx_d'), approved('05')], noSubscription, { salvage: false });
    expect(result).toMatchObject({
      info: 'Success', chargeSuccess: true, subscribeSuccess: false, declineSalvage: false, statusId: 2636, error: '', message: 'Transaction succeeded',
      transactionId: 'sbx_ok', eci: '05', submitOrderId: 501, orderId: 501, subscriptionId: 0,
      mid: 'MID-7', merchantAccountId: 7, descriptor: 'SHOP*7', midPortalUrl: 'https://portal.example/7', amount: 19.99, partnerSession: 'ps-1',
    });
    expect(result.gatewayResponses).toEqual([exchange(200, '{"status":"declined"}'), exchange(200, '{"status":"approved"}')]);
    expect(Object.keys(result).sort()).toEqual([...SPEC_FIELDS].sort());
  });

  it('a decline is Error with the spec description of its status as error and message', () => {
    const result = buildProcessedResult(payment, account, [declined(3617, 'sbx_d')], noSubscription, { salvage: false });
    expect(result).toMatchObject({ info: 'Error', statusId: 3617, error: 'Declined', message: 'Declined', chargeSuccess: false, transactionId: 'sbx_d', eci: '' });
    const withoutId = buildProcessedResult(payment, account, [declined(3627)], noSubscription, { salvage: false });
    expect(withoutId).toMatchObject({ info: 'Error', statusId: 3627, error: 'Invalid card security code', transactionId: '' });
  });

  it('an attempt without an answer ends as 4285 Processing Error - System Timeout', () => {
    const result = buildProcessedResult(payment, account, [unknown], noSubscription, { salvage: false });
    expect(result).toMatchObject({ info: 'Error', statusId: 4285, error: 'Processing Error - System Timeout', transactionId: '', chargeSuccess: false });
  });

  it('an approval overridden by a failed 3-D Secure is an Error with that status', () => {
    const result = buildProcessedResult(payment, account, [approved('07')], noSubscription, { salvage: false, overrideStatusId: 4172 });
    expect(result).toMatchObject({ info: 'Error', statusId: 4172, error: '3DS Failed', chargeSuccess: false, eci: '07' });
  });

  it('an approved subscription carries its own order and subscription ids', () => {
    const result = buildProcessedResult(payment, account, [approved()], { orderId: 502, subscriptionId: 9 }, { salvage: false });
    expect(result).toMatchObject({ info: 'Success', chargeSuccess: true, subscribeSuccess: true, declineSalvage: false, orderId: 502, submitOrderId: 501, subscriptionId: 9 });
  });

  it('a salvaged insufficient-funds decline is Success: subscribed, not charged, declineSalvage', () => {
    const result = buildProcessedResult(payment, account, [declined(3512, 'sbx_nsf')], { orderId: 502, subscriptionId: 9 }, { salvage: true });
    expect(result).toMatchObject({
      info: 'Success', chargeSuccess: false, subscribeSuccess: true, declineSalvage: true, statusId: 3512, error: 'Insufficient Funds', orderId: 502, subscriptionId: 9,
    });
  });
});

describe('pending and unprocessed results', () => {
  const challenge: AttemptView = {
    outcome: { kind: 'challenge', processorTransactionId: 'sbx_ch', challengeUrl: 'http://127.0.0.1:9/challenge/sbx_ch' },
    exchange: exchange(200, '{"status":"challenge_required"}'),
  };

  it('3-D Secure is Pending with the threeDSecureId, an empty message and the Submitted status', () => {
    expect(pendingResult(payment, account, [challenge], '3ds_abc')).toMatchObject({
      info: 'Pending', message: '', error: '', threeDSecureId: '3ds_abc', statusId: 1789, transactionId: 'sbx_ch', chargeSuccess: false, mid: 'MID-7', submitOrderId: 501,
    });
  });

  it('a processor redirect is RedirectRequired with the URL as message', () => {
    const redirect: AttemptView = { ...challenge, outcome: { ...challenge.outcome, redirect: true } as AttemptView['outcome'] };
    expect(pendingResult(payment, account, [redirect], '3ds_abc')).toMatchObject({
      info: 'RedirectRequired', message: 'http://127.0.0.1:9/challenge/sbx_ch', threeDSecureId: '3ds_abc', statusId: 1789,
    });
  });

  it('no eligible merchant account is None, with the order but no MID and no processor exchange', () => {
    const error = 'No merchant account available for this payment';
    expect(noMerchantAccountResult(payment)).toEqual({ ...emptyResult(context), info: 'None', error, message: error, submitOrderId: 501, orderId: 501 });
  });
});
