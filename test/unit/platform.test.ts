import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../platform/config.ts';
import { renderConfigurationDoc } from '../../platform/config-doc.ts';
import { PostgreSqlPlatform } from '@mikro-orm/postgresql';
import { createLogger, censorCardNumbers } from '../../platform/logger.ts';
import { CapturedLogs } from '../support/harness.ts';
import { databaseAddress, unreachableServer } from '../../platform/unreachable-server.ts';

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

  it('takes the GraphQL origins as browsers send them, and refuses a wildcard, a user or a path', () => {
    expect(loadConfig({ GRAPHQL_ALLOWED_ORIGINS: 'https://Admin.example:443, http://localhost:5173,http://[::1]:8080' }).graphqlAllowedOrigins).toEqual([
      'https://admin.example',
      'http://localhost:5173',
      'http://[::1]:8080',
    ]);
    for (const value of ['https://*', 'https://*.example', 'https://user@admin.example', 'https://admin.example/', '*']) {
      expect(() => loadConfig({ GRAPHQL_ALLOWED_ORIGINS: value }), value).toThrow(/GRAPHQL_ALLOWED_ORIGINS/);
    }
  });

  it('applies defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, rateLimitPerMinute: 100, webhookRetrySchedule: [0, 5, 300, 1800, 7200, 18000, 36000, 36000], webhookTimeoutMs: 15000 });
    expect(config.databaseUrl).toBeUndefined();
  });

  it('docs/configuration.md matches the settings (run `npm run docs:config`)', () => {
    expect(readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')).toBe(renderConfigurationDoc());
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

  it("removes the values a PostgreSQL error echoes, keeping its code and message", () => {
    const logs = new CapturedLogs();
    const logger = createLogger({ level: 'info', destination: logs.stream });
    const refused = { where: 'JSON data, line 1: {"email":"ada@example.com"', detail: 'Key (email)=(ada@example.com) already exists.', code: '22P05' };
    logger.error({ err: Object.assign(new Error('unsupported Unicode escape sequence'), refused) }, 'unexpected error');
    logger.error({ err: Object.assign(new Error('wrapped'), { cause: Object.assign(new Error('duplicate key'), refused) }) }, 'unexpected error');
    const text = logs.text();
    expect(text).not.toContain('ada@example.com');
    expect(text).toContain('22P05');
    expect(text).toContain('unsupported Unicode escape sequence');
  });

  it('cuts the values MikroORM appends to a PostgreSQL error message (its detail and hint), in the message and the stack', () => {
    const logs = new CapturedLogs();
    const logger = createLogger({ level: 'info', destination: logs.stream });
    const pgError = Object.assign(new Error('duplicate key value violates unique constraint "tenants_email_tenant_key_unique"'), {
      code: '23505',
      detail: 'Key (email_tenant_key)=(tk_7f3c9a1e-secret) already exists.',
      hint: 'Remove tk_7f3c9a1e-secret first.',
    });
    // MikroORM's own conversion, as the gateway's queries meet it.
    const converted = new PostgreSqlPlatform().getExceptionConverter().convertException(pgError);
    expect(converted.message).toContain('tk_7f3c9a1e-secret');
    logger.error({ err: converted }, 'unexpected error');
    logger.error({ err: Object.assign(new Error('provisioning failed'), { cause: converted }) }, 'unexpected error');
    const text = logs.text();
    expect(text).not.toContain('tk_7f3c9a1e-secret');
    expect(text).toContain('duplicate key value violates unique constraint');
  });

  it('leaves ordinary numbers alone', () => {
    expect(censorCardNumbers('order 12345 for 29.99')).toBe('order 12345 for 29.99');
  });
});

describe('a server a process cannot reach at start', () => {
  const postgres = { name: 'PostgreSQL', setting: 'DATABASE_URL', address: databaseAddress('postgres://app:s3cret@db.internal:6432/payments') };

  it('is named by its setting and address, never its password', () => {
    expect(postgres.address).toBe('db.internal:6432/payments');
    expect(unreachableServer(postgres, new Error('connect ECONNREFUSED 10.0.0.5:6432'))).toBe(
      'Cannot reach PostgreSQL at db.internal:6432/payments (DATABASE_URL): connect ECONNREFUSED 10.0.0.5:6432. Start it, or set DATABASE_URL to where it runs',
    );
  });

  it("says why in the words of each address tried when the error's own message is empty (localhost: ::1, then 127.0.0.1)", () => {
    const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    const both = Object.assign(new AggregateError([refused('::1:5432'), refused('127.0.0.1:5432')], ''), { code: 'ECONNREFUSED' });
    expect(unreachableServer(postgres, both)).toContain('(DATABASE_URL): connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432. Start it');
    expect(unreachableServer(postgres, Object.assign(new Error(''), { code: 'ETIMEDOUT' }))).toContain('(DATABASE_URL): ETIMEDOUT. Start it');
  });
});
