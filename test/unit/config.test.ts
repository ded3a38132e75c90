import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../platform/config.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration from the environment', () => {
  it('decodes values into what the product uses', () => {
    const key = Buffer.alloc(32, 9);
    const config = loadConfig({ DATA_ENCRYPTION_KEY: key.toString('base64'), WEBHOOK_RETRY_SCHEDULE: '0, 10,60', PORT: '8080', DATABASE_URL: 'postgres://app:pw@db:5432/payments' });
    expect(config.dataEncryptionKey).toEqual(key);
    expect(config).toMatchObject({ webhookRetrySchedule: [0, 10, 60], port: 8080, databaseUrl: 'postgres://app:pw@db:5432/payments' });
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 3000, databaseUrl: undefined });
  });

  it('names each bad variable with the rule it breaks, without echoing secrets', () => {
    const problems = problemsOf({ LOG_LEVEL: 'loud', DATABASE_URL: 'not a url', TEMPORAL_ADDRESS: 'localhost', OPERATOR_TOKEN: 'short-secret', BODY_LIMIT_BYTES: '5' });
    expect(problems).toEqual([
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent',
      'DATABASE_URL: must be a URL',
      'TEMPORAL_ADDRESS: must be host:port',
      'OPERATOR_TOKEN: must be at least 16 characters',
      'BODY_LIMIT_BYTES: must be >= 1024',
    ]);
    expect(problems.join('\n')).not.toContain('short-secret');
  });
});
