import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { MAX_RETRY_AFTER_SECONDS, parseRetryAfter, waitBeforeAttempt } from '../../domain/webhooks/retry-policy.ts';
import { signWebhook } from '../../domain/webhooks/signing.ts';

describe('webhook retry policy', () => {
  it('waits the scheduled time, or longer when Retry-After asks', () => {
    expect(waitBeforeAttempt([0, 5, 300], 0)).toBe(0);
    expect(waitBeforeAttempt([0, 5, 300], 1, 2)).toBe(5);
    expect(waitBeforeAttempt([0, 5, 300], 1, 60)).toBe(60);
    expect(waitBeforeAttempt([0, 5, 300], 1, MAX_RETRY_AFTER_SECONDS)).toBe(MAX_RETRY_AFTER_SECONDS);
    expect(waitBeforeAttempt([0, 5, 300], 2, MAX_RETRY_AFTER_SECONDS + 1)).toBe(300);
  });

  it('parses Retry-After seconds and dates against the given clock', () => {
    const now = Date.parse('2025-06-15T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sun, 15 Jun 2025 12:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Sun, 15 Jun 2025 11:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('signs as the standardwebhooks package verifies', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = JSON.stringify({ type: 't', timestamp: 'x', data: {} });
    const headers = signWebhook({ id: 'msg_1', timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [secret] });
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });
});
