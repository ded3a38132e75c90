import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../platform/config.ts';
import { createLogger, censorCardNumbers } from '../platform/logger.ts';
import { createSecretBox } from '../domain/crypto/secret-box.ts';
import { toFractionString, toMoneyString } from '../domain/money.ts';
import { waitBeforeAttempt, parseRetryAfter } from '../domain/webhooks/retry-policy.ts';
import { signWebhook } from '../domain/webhooks/signing.ts';
import { Webhook } from 'standardwebhooks';
import { CapturedLogs } from './support/harness.ts';

describe('configuration', () => {
  it('reports every bad variable by name', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({ PORT: 'eighty', DATA_ENCRYPTION_KEY: 'short', WEBHOOK_RETRY_SCHEDULE: '0,x' });
    } catch (caught) {
      error = caught as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toEqual([
      expect.stringMatching(/^PORT: must be an integer/),
      expect.stringMatching(/^DATA_ENCRYPTION_KEY: must be 32 bytes/),
      expect.stringMatching(/^WEBHOOK_RETRY_SCHEDULE: /),
    ]);
  });

  it('applies defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, rateLimitPerMinute: 100, webhookRetrySchedule: [0, 5, 300, 1800, 7200, 18000, 36000, 36000], webhookTimeoutMs: 15000 });
    expect(config.databaseUrl).toBeUndefined();
  });
});

describe('money', () => {
  it.each([
    [29.9, '29.90'],
    ['0.07', '0.07'],
    [100, '100.00'],
    ['0012.5', '12.50'],
  ])('%s becomes %s without float arithmetic', (input, expected) => {
    expect(toMoneyString(input, 'amount')).toBe(expected);
  });

  it.each([[-1], ['1.234'], [1e21], ['1,00'], [Number.NaN]])('rejects %s', (input) => {
    expect(() => toMoneyString(input as number, 'amount')).toThrow(/amount/);
  });

  it('normalises fractions and refuses more than 1', () => {
    expect(toFractionString(0.1, 'reserve')).toBe('0.1000');
    expect(toFractionString('1', 'reserve')).toBe('1.0000');
    expect(() => toFractionString('1.5', 'reserve')).toThrow(/reserve/);
  });
});

describe('log redaction', () => {
  it('masks card numbers in messages and removes secrets by path', () => {
    const logs = new CapturedLogs();
    const logger = createLogger({ level: 'info', destination: logs.stream });
    logger.info({ card: { pan: '4242424242424242', cvv: '123' }, req: { headers: { authorization: 'Bearer sk_secret_value' } } }, 'charging 4242 4242 4242 4242');
    logger.error({ err: new Error('processor refused 4000000000000002') }, 'failed');
    const text = logs.text();
    expect(text).not.toMatch(/4242424242424242|4242 4242 4242 4242|4000000000000002|sk_secret_value|"cvv"/);
    expect(text).toContain('424242…4242');
  });

  it('leaves ordinary numbers alone', () => {
    expect(censorCardNumbers('order 12345 for 29.99')).toBe('order 12345 for 29.99');
  });
});

describe('secret box', () => {
  it('round-trips and detects tampering', () => {
    const box = createSecretBox(Buffer.alloc(32, 7));
    const sealed = box.seal('whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.open(sealed)).toBe('whsec_abc');
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => box.open(tampered)).toThrow();
  });
});

describe('webhook retry policy', () => {
  it('waits the scheduled time, or longer when Retry-After asks', () => {
    expect(waitBeforeAttempt([0, 5, 300], 0)).toBe(0);
    expect(waitBeforeAttempt([0, 5, 300], 1, 2)).toBe(5);
    expect(waitBeforeAttempt([0, 5, 300], 1, 60)).toBe(60);
    expect(waitBeforeAttempt([0, 5, 300], 2, 10 * 24 * 3600)).toBe(300);
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('120')).toBe(120);
    expect(parseRetryAfter(new Date(Date.now() + 30_000).toUTCString())).toBeGreaterThanOrEqual(29);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it('signs as the standardwebhooks package verifies', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = JSON.stringify({ type: 't', timestamp: 'x', data: {} });
    const headers = signWebhook({ id: 'msg_1', timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [secret] });
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });
});

describe('configuration reference', () => {
  it('docs/configuration.md matches the settings (run `npm run docs:config`)', async () => {
    const { readFileSync } = await import('node:fs');
    const { renderConfigurationDoc } = await import('../platform/config-doc.ts');
    expect(readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8')).toBe(renderConfigurationDoc());
  });
});
