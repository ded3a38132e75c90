import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeCredentials } from '../../scripts/local-stack/dev-credentials.ts';

describe("npm start's credential lines", () => {
  it('print the development secrets kept under DATA_DIR', () => {
    const lines = describeCredentials({ operatorToken: 'dev-token-1', dataEncryptionKey: 'ZGV2LWtleQ==' }).join('\n');
    expect(lines).toContain('dev-token-1');
    expect(lines).toContain('ZGV2LWtleQ==');
  });

  it('name the secrets set in the environment (production) without printing them', () => {
    const lines = describeCredentials({ operatorToken: undefined, dataEncryptionKey: undefined });
    expect(lines).toContain('Operator token   from OPERATOR_TOKEN (not printed)');
    expect(lines).toContain('Encryption key   from DATA_ENCRYPTION_KEY (not printed)');
  });
});

describe('npm run credentials', () => {
  const script = path.resolve(import.meta.dirname, '../../scripts/credentials.ts');
  // The suite's own settings must not reach the script: it reads only what DATA_DIR and the environment given hold.
  const run = (env: Record<string, string>) => {
    const { OPERATOR_TOKEN, DATA_ENCRYPTION_KEY, NODE_ENV, DATA_DIR, ...inherited } = process.env;
    return spawnSync(process.execPath, ['--import', 'tsx', script], { env: { ...inherited, ...env }, encoding: 'utf8' });
  };

  it('tells a DATA_DIR no start has used, and makes no secrets there', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'credentials-'));
    try {
      const answer = run({ DATA_DIR: dataDir });
      expect(answer.status).toBe(1);
      expect(answer.stderr).toContain(`No development credentials under DATA_DIR ${dataDir}`);
      expect(answer.stdout).toBe('');
      expect(readdirSync(dataDir)).toEqual([]);
      // Secrets in the environment do not make it one: there is still nothing to print.
      const withSecrets = run({ DATA_DIR: dataDir, OPERATOR_TOKEN: 'environment-operator-token', DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
      expect(withSecrets.status).toBe(1);
      expect(withSecrets.stderr).toContain(`No development credentials under DATA_DIR ${dataDir}`);
      // A bad setting is told as every entry point tells it, without a stack trace.
      const badKey = run({ DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: 'not-base64' });
      expect(badKey.status).toBe(1);
      expect(badKey.stderr).toMatch(/^Invalid configuration:\n {2}DATA_ENCRYPTION_KEY: /);
      expect(badKey.stderr).not.toMatch(/\bat \w+ \(/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('prints the kept ones, and names without printing the ones set in the environment', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'credentials-'));
    try {
      writeFileSync(path.join(dataDir, 'credentials.json'), JSON.stringify({ operatorToken: 'kept-operator-token' }));
      writeFileSync(path.join(dataDir, 'data-encryption.key'), 'a2VwdC1lbmNyeXB0aW9uLWtleQ==\n');
      const kept = run({ DATA_DIR: dataDir });
      expect(kept.status).toBe(0);
      expect(kept.stdout).toContain('kept-operator-token');
      expect(kept.stdout).toContain('a2VwdC1lbmNyeXB0aW9uLWtleQ==');

      const fromEnvironment = run({ DATA_DIR: dataDir, OPERATOR_TOKEN: 'environment-operator-token', DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
      expect(fromEnvironment.status).toBe(0);
      expect(fromEnvironment.stdout).toContain('Operator token   from OPERATOR_TOKEN (not printed)');
      expect(fromEnvironment.stdout).toContain('Encryption key   from DATA_ENCRYPTION_KEY (not printed)');
      expect(fromEnvironment.stdout).not.toContain('environment-operator-token');
      expect(fromEnvironment.stdout).not.toContain('kept-operator-token');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
